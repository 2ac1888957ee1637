// safe: js.path.file-access
const express = require("express");
const fs = require("fs");

const app = express();
const STORAGE = "static";

app.get("/files/:name", (req, res) => {
  let file;
  switch (STORAGE) {
    case "static":
      file = "/srv/static/index.html";
      break;
    case "uploads":
      file = "/srv/uploads/" + req.params.name;
      break;
    default:
      file = "/srv/empty";
  }
  fs.readFile(file, (err, data) => res.json({ size: data.length }));
});
