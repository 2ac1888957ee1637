const express = require('express');
const fs = require('fs');
const path = require('path');

const app = express();
const BASE = '/srv/reports';

app.get('/report', (req, res) => {
  // joined but never resolved: "../../etc/passwd" keeps its dots and passes the prefix check
  const full = BASE + '/' + req.query.name;
  if (!full.startsWith(BASE)) {
    return res.status(400).end();
  }
  fs.createReadStream(full).pipe(res); // vuln: js.path.file-access
});
