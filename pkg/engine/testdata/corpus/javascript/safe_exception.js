// safe: js.sqli.string-query
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
    res.status(400).json({ error: "bad limit" });
    return;
  }
  const rows = await db.query("SELECT * FROM items LIMIT " + limit);
  res.json(rows);
});
