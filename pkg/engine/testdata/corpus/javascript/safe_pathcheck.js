// safe: js.path.file-access
const express = require('express');
const fs = require('fs');
const path = require('path');

const app = express();
const BASE = '/srv/reports';

app.get('/report', (req, res) => {
  const full = path.resolve(BASE, req.query.name);
  if (!full.startsWith(BASE + path.sep)) {
    return res.status(400).end();
  }
  fs.createReadStream(full).pipe(res);
});
