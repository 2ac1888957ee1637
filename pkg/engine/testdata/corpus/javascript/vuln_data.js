const express = require("express");
const serialize = require("node-serialize");
const libxmljs = require("libxmljs");

const app = express();

app.post("/session", (req, res) => {
  const state = serialize.unserialize(req.cookies.session); // vuln: js.deser.unserialize
  res.json(state);
});

app.post("/xml", (req, res) => {
  const doc = libxmljs.parseXml(req.body, { noent: true }); // vuln: js.xxe.noent
  res.json({ root: doc.root().name() });
});
