const express = require("express");
const mysql = require("mysql");

const app = express();
const conn = mysql.createConnection({ host: "db", user: "reports" });

app.get("/reports", (req, res) => {
  let order = "created_at";
  if (req.query.sort) {
    order = req.query.sort;
  }
  conn.query("SELECT * FROM reports ORDER BY " + order, (err, rows) => res.json(rows)); // vuln: js.sqli.string-query
});

module.exports = app;
