const express = require("express");
const https = require("https");
const cors = require("cors");
const jwt = require("jsonwebtoken");

const app = express();
app.use(cors({ origin: true, credentials: true })); // vuln: js.cors.credentials-any-origin

const apiKey = "sk_live_51HxQ2mZ8vT4rP"; // vuln: js.secrets.hardcoded-credential
const agent = new https.Agent({ rejectUnauthorized: false }); // vuln: js.tls.reject-unauthorized

function currentUser(req) {
  return jwt.decode(req.headers.authorization.slice(7)); // vuln: js.jwt.unverified
}

app.use((req, res, next) => {
  res.setHeader("Access-Control-Allow-Origin", req.headers.origin); // vuln: js.cors.reflect-origin
  next();
});

app.use((err, req, res, next) => {
  res.status(500).send(err.stack); // vuln: js.debug.stack-trace
});

module.exports = { app, agent, apiKey, currentUser };
