const express = require("express");
const { exec } = require("child_process");
const ldap = require("ldapjs");
const ejs = require("ejs");
const db = require("./db");
const User = require("./models/user");

const app = express();
const client = ldap.createClient({ url: "ldap://directory" });

function findUser(name) {
  const sql = `SELECT * FROM users WHERE name = '${name}'`;
  return db.query(sql); // vuln: js.sqli.string-query
}

app.get("/users", (req, res) => {
  findUser(req.query.name).then((rows) => res.json(rows));
});

app.post("/login", async (req, res) => {
  const user = await User.findOne({ username: req.body.username, password: req.body.password }); // vuln: js.nosqli.query-object
  res.json({ ok: !!user });
});

app.get("/ping", (req, res) => {
  const host = req.query.host;
  exec("ping -c 1 " + host, (err, out) => res.send(String(out))); // vuln: js.cmdi.exec
});

app.get("/ldap", (req, res) => {
  const filter = "(uid=" + req.query.user + ")";
  client.search("dc=example,dc=com", { filter, scope: "sub" }, () => res.end()); // vuln: js.ldapi.filter
});

app.get("/hello", (req, res) => {
  const html = ejs.render("<h1>Hello " + req.query.name + "</h1>"); // vuln: js.ssti.compile
  res.type("html").end("ok" + html.length);
});

app.post("/calc", (req, res) => {
  const result = eval(req.body.expr); // vuln: js.code.eval
  res.json({ result });
});
