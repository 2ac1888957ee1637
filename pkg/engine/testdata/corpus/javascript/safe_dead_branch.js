// safe: js.cmdi.exec
const express = require("express");
const { exec } = require("child_process");

const app = express();
const ALLOW_RAW = false;

app.post("/convert", (req, res) => {
  let target = "report.pdf";
  if (ALLOW_RAW) {
    target = req.body.output;
  }
  exec("convert input.ps " + target, () => res.end("done"));
});
