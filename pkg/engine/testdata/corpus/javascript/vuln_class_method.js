const express = require("express");
const { Pool } = require("pg");

class InvoiceRepository {
  constructor(pool) {
    this.pool = pool;
  }

  async find(status) {
    function where(s) {
      return "status = '" + s + "'";
    }
    return this.pool.query("SELECT * FROM invoices WHERE " + where(status)); // vuln: js.sqli.string-query
  }
}

const repo = new InvoiceRepository(new Pool());
const app = express();

app.get("/invoices", async (req, res) => {
  const result = await repo.find(req.query.status);
  res.json(result.rows);
});
