// safe: js.xss.response js.path.file-access js.ssrf.request js.redirect.open
const express = require("express");
const fs = require("fs");
const path = require("path");
const axios = require("axios");
const escapeHtml = require("escape-html");

const app = express();

app.get("/greet", (req, res) => {
  res.send("<p>Hello " + escapeHtml(req.query.name) + "</p>");
});

function render(el, params) {
  el.textContent = params;
}
render(document.getElementById("out"), location.hash);

app.get("/download", (req, res) => {
  const file = path.join("/srv/files", path.basename(req.params.name));
  fs.readFile(file, (err, data) => res.json({ size: data.length }));
  res.sendFile(req.params.name, { root: "/srv/public" });
});

app.get("/fetch", async (req, res) => {
  const resp = await axios.get("https://api.example.com/search?q=" + encodeURIComponent(req.query.q));
  res.json(resp.data);
});

app.get("/login", (req, res) => {
  res.redirect("/dashboard");
});
