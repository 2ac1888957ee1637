const express = require("express");
const fs = require("fs");
const axios = require("axios");

const app = express();

app.get("/greet", (req, res) => {
  const name = req.query.name;
  res.send("<p>Hello " + name + "</p>"); // vuln: js.xss.response
});

function render(el, params) {
  el.innerHTML = "<b>" + params + "</b>"; // vuln: js.xss.response
}
render(document.getElementById("out"), location.hash);

app.get("/download", (req, res) => {
  const file = "/srv/files/" + req.params.name;
  fs.readFile(file, (err, data) => res.json({ size: data.length })); // vuln: js.path.file-access
});

app.get("/fetch", async (req, res) => {
  const target = req.query.url;
  const resp = await axios.get(target); // vuln: js.ssrf.request
  res.json(resp.data);
});

app.get("/login", (req, res) => {
  res.redirect(req.query.next); // vuln: js.redirect.open
});
