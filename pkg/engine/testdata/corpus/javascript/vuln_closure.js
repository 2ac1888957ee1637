const express = require("express");
const { exec } = require("child_process");

const app = express();

function withRetry(task, attempts) {
  for (let i = 0; i < attempts; i++) {
    if (task()) {
      return true;
    }
  }
  return false;
}

app.get("/ping", (req, res) => {
  const host = req.query.host;
  withRetry(() => exec("ping -c 1 " + host), 3); // vuln: js.cmdi.exec
  res.end("sent");
});

app.get("/lookup", (req, res) => {
  const hosts = [req.query.host];
  hosts.forEach((h) => {
    exec("nslookup " + req.query.host, () => res.end("done")); // vuln: js.cmdi.exec
  });
});
