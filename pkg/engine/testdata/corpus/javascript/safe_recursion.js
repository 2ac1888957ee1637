// safe: js.cmdi.exec
const express = require("express");
const { exec } = require("child_process");

const app = express();

function depthFlag(level) {
  if (level <= 0) {
    return "";
  }
  return "-v" + depthFlag(level - 1);
}

app.post("/archive", (req, res) => {
  const count = req.body.files.length;
  exec("tar czf /tmp/out.tgz /srv/data " + depthFlag(count), () => res.end("ok"));
});
