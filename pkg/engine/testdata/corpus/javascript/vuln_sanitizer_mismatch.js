const express = require("express");
const path = require("path");
const { exec } = require("child_process");
const escapeHtml = require("escape-html");
const db = require("./db");

const app = express();

app.get("/thumb", (req, res) => {
  const name = path.basename(req.query.file);
  exec("convert /srv/img/" + name + " -resize 64x64 /tmp/thumb.png", () => res.end()); // vuln: js.cmdi.exec
});

app.get("/profile", async (req, res) => {
  const user = escapeHtml(req.query.user);
  const rows = await db.query("SELECT * FROM profiles WHERE login = '" + user + "'"); // vuln: js.sqli.string-query
  res.json(rows);
});

app.get("/echo", (req, res) => {
  res.send("<p>" + encodeURI(req.query.msg) + "</p>"); // vuln: js.xss.response
});
