// safe: js.sqli.string-query
const express = require("express");
const { Pool } = require("pg");

const pool = new Pool();
const app = express();

app.get("/search", async (req, res) => {
  const search = { table: "products", term: req.query.q };
  search.column = "name";
  const sql = "SELECT * FROM " + search.table + " WHERE " + search.column + " LIKE $1";
  const result = await pool.query(sql, ["%" + search.term + "%"]);
  res.json(result.rows);
});
