// safe: js.cmdi.exec js.sqli.string-query js.xss.response js.path.file-access js.nosqli.query-object
const express = require("express");
const fs = require("fs");
const path = require("path");
const he = require("he");
const { quote } = require("shell-quote");
const validator = require("validator");
const { exec } = require("child_process");
const db = require("./db");
const Order = require("./models/order");

const app = express();

app.get("/thumb", (req, res) => {
  exec("convert " + quote(["/srv/img/" + req.query.file]) + " /tmp/thumb.png", () => res.end());
});

app.get("/page", async (req, res) => {
  const page = parseInt(req.query.page, 10);
  const size = Number(req.query.size);
  const rows = await db.query("SELECT * FROM posts LIMIT " + size + " OFFSET " + page * size);
  res.json(rows);
});

app.get("/item/:id", async (req, res) => {
  const id = validator.toInt(req.params.id);
  const rows = await db.query("SELECT * FROM items WHERE id = " + id);
  res.json(rows);
});

app.get("/echo", (req, res) => {
  res.send("<p>" + he.encode(req.query.msg) + "</p>");
});

app.get("/doc", (req, res) => {
  fs.readFile(path.join("/srv/docs", path.basename(req.query.name)), "utf8", (err, text) => res.json({ text }));
});

app.get("/orders", async (req, res) => {
  const orders = await Order.find({ customer: String(req.query.customer) });
  res.json(orders);
});
