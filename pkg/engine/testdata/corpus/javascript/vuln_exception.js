const express = require("express");
const db = require("./db");

const app = express();

function strictNumber(value) {
  if (!/^[0-9]+$/.test(value)) {
    throw new Error("not a number");
  }
  return parseInt(value, 10);
}

app.get("/items", async (req, res) => {
  let limit = req.query.limit;
  try {
    limit = strictNumber(limit);
  } catch (e) {
    console.warn("bad limit", e.message);
  }
  const rows = await db.query("SELECT * FROM items LIMIT " + limit); // vuln: js.sqli.string-query
  res.json(rows);
});
