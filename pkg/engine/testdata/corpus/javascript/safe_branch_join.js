// safe: js.sqli.string-query
const express = require("express");
const mysql = require("mysql");

const app = express();
const conn = mysql.createConnection({ host: "db", user: "reports" });

app.get("/reports", (req, res) => {
  let order = "created_at";
  if (req.query.sort === "title") {
    order = "title";
  } else if (req.query.sort === "owner") {
    order = "owner_id";
  }
  conn.query("SELECT * FROM reports ORDER BY " + order, (err, rows) => res.json(rows));
});

module.exports = app;
