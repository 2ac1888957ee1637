// safe: js.xss.response js.sqli.string-query
const express = require("express");
const { Pool } = require("pg");

const pool = new Pool();
const app = express();

app.get("/tickets", async (req, res) => {
  const result = await pool.query("SELECT id, subject FROM tickets WHERE owner = $1", [req.query.owner]);
  const items = result.rows.map((row) => "<li>" + Number(row.id) + "</li>").join("");
  res.send("<ul>" + items + "</ul>");
});

app.get("/tickets/:id", async (req, res) => {
  const result = await pool.query("SELECT * FROM tickets WHERE id = $1", [req.params.id]);
  res.send(result.rows[0]);
});
