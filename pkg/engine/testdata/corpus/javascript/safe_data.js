// safe: js.deser.unserialize js.xxe.noent
const express = require("express");
const libxmljs = require("libxmljs");

const app = express();

app.post("/session", (req, res) => {
  const state = JSON.parse(req.cookies.session);
  res.json(state);
});

app.post("/xml", (req, res) => {
  const doc = libxmljs.parseXml(req.body, { noent: false, nonet: true });
  res.json({ root: doc.root().name() });
});
