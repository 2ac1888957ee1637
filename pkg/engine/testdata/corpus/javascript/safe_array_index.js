// safe: js.ssrf.request
const express = require("express");
const axios = require("axios");

const app = express();

app.get("/mirror", async (req, res) => {
  const endpoints = ["https://status.example.com/health", req.query.backup];
  const urls = [];
  urls.push("https://cdn.example.com/ping");
  urls.push(req.query.extra);
  const a = await axios.get(endpoints[0]);
  const b = await axios.get(urls[0]);
  res.json({ a: a.status, b: b.status });
});
