// safe: js.cors.credentials-any-origin js.secrets.hardcoded-credential js.tls.reject-unauthorized
// safe: js.jwt.unverified js.jwt.none-algorithm js.cors.reflect-origin js.debug.stack-trace
const express = require("express");
const https = require("https");
const cors = require("cors");
const jwt = require("jsonwebtoken");

const app = express();
app.use(cors({ origin: ["https://app.example.com"], credentials: true }));

const apiKey = process.env.STRIPE_KEY;
const agent = new https.Agent({ ca: process.env.INTERNAL_CA });
const allowed = new Set(["https://app.example.com"]);

function currentUser(req) {
  return jwt.verify(req.headers.authorization.slice(7), process.env.JWT_KEY, { algorithms: ["HS256"] });
}

app.use((req, res, next) => {
  if (allowed.has(req.headers.origin)) {
    res.setHeader("Access-Control-Allow-Origin", "https://app.example.com");
  }
  next();
});

app.use((err, req, res, next) => {
  console.error(err.stack);
  res.status(500).send("internal error");
});

module.exports = { app, agent, apiKey, currentUser };
