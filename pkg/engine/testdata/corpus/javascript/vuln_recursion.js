const express = require("express");
const { exec } = require("child_process");

const app = express();

function joinArgs(parts, i) {
  if (i >= parts.length) {
    return "";
  }
  return " " + parts[i] + joinArgs(parts, i + 1);
}

app.post("/archive", (req, res) => {
  const files = req.body.files;
  exec("tar czf /tmp/out.tgz" + joinArgs(files, 0), () => res.end("ok")); // vuln: js.cmdi.exec
});
