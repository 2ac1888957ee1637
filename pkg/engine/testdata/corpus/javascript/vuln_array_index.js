const express = require("express");
const axios = require("axios");

const app = express();

app.get("/mirror", async (req, res) => {
  const endpoints = ["https://status.example.com/health", req.query.backup];
  const urls = [];
  urls.push("https://cdn.example.com/ping");
  urls.push(req.query.extra);
  const a = await axios.get(endpoints[1]); // vuln: js.ssrf.request
  const b = await axios.get(urls[1]); // vuln: js.ssrf.request
  res.json({ a: a.status, b: b.status });
});
