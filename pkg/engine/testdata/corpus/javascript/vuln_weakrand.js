const express = require("express");
const session = require("express-session");

const app = express();
app.use(session({ secret: process.env.SESSION_SECRET, resave: false, saveUninitialized: false }));

function randomId() {
  return Math.random().toString(36).substring(2);
}

app.post("/login", (req, res) => {
  const sid = randomId();
  res.cookie("sid", sid, { httpOnly: true, secure: true }); // vuln: js.weakrand.security-use
  req.session.csrfToken = Math.floor(Math.random() * 1e9).toString(16); // vuln: js.weakrand.security-use
  res.cookie("theme", req.body.theme, { httpOnly: true }); // vuln: js.cookie.insecure
  res.json({ ok: true });
});
