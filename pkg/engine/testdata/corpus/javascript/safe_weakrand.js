// safe: js.weakrand.security-use js.cookie.insecure js.crypto.weak-random
const express = require("express");
const crypto = require("crypto");
const session = require("express-session");

const app = express();
app.use(session({ secret: process.env.SESSION_SECRET, resave: false, saveUninitialized: false }));

function randomId() {
  return crypto.randomBytes(16).toString("hex");
}

app.post("/login", (req, res) => {
  const sid = randomId();
  res.cookie("sid", sid, { httpOnly: true, secure: true });
  req.session.csrfToken = crypto.randomUUID();
  const delay = Math.floor(Math.random() * 100);
  res.cookie("theme", req.body.theme, { httpOnly: true, secure: true, maxAge: delay });
  res.json({ ok: true });
});
