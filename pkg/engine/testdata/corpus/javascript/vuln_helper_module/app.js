const express = require("express");
const orders = require("./orders");

const app = express();

app.get("/orders/:id", async (req, res) => {
  const rows = await orders.byCustomer(req.params.id);
  res.json(rows);
});

module.exports = app;
