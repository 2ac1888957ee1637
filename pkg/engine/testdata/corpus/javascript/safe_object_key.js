// safe: js.cmdi.exec
const express = require("express");
const { execSync } = require("child_process");

const app = express();

app.get("/tools", (req, res) => {
  const commands = { list: "ls -l /srv/data", search: "grep -r " + req.query.term + " /srv/data" };
  const tools = new Map();
  tools.set("disk", "df -h");
  tools.set("user", "id " + req.query.user);
  const out1 = execSync(commands.list);
  const out2 = execSync(tools.get("disk"));
  res.json({ out1: String(out1), out2: String(out2) });
});
