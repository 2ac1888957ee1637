// safe: js.sqli.string-query js.nosqli.query-object js.cmdi.exec js.ldapi.filter js.ssti.compile js.code.eval
const express = require("express");
const { execFile } = require("child_process");
const ldap = require("ldapjs");
const ldapEscape = require("ldap-escape");
const ejs = require("ejs");
const db = require("./db");
const User = require("./models/user");

const app = express();
const client = ldap.createClient({ url: "ldap://directory" });

function findUser(name) {
  return db.query("SELECT * FROM users WHERE name = ?", [name]);
}

app.get("/users", (req, res) => {
  findUser(req.query.name).then((rows) => res.json(rows));
});

app.post("/login", async (req, res) => {
  const user = await User.findOne({ username: String(req.body.username) });
  res.json({ ok: !!user });
});

app.get("/ping", (req, res) => {
  execFile("ping", ["-c", "1", req.query.host], (err, out) => res.json({ out }));
});

app.get("/ldap", (req, res) => {
  const filter = new ldap.EqualityFilter({ attribute: "uid", value: req.query.user });
  client.search("dc=example,dc=com", { filter: ldapEscape.filter`(uid=${req.query.user})`, scope: "sub" }, () => res.end());
});

app.get("/hello", (req, res) => {
  res.render("hello", { name: req.query.name });
});

app.post("/calc", (req, res) => {
  const data = JSON.parse(req.body.payload);
  res.json({ data });
});
