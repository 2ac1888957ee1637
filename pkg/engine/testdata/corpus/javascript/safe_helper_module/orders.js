// safe: js.sqli.string-query
const mysql = require("mysql2/promise");

const pool = mysql.createPool({ host: "db", database: "shop" });

async function byCustomer(customerId) {
  const [rows] = await pool.query("SELECT * FROM orders WHERE customer_id = ?", [customerId]);
  return rows;
}

module.exports = { byCustomer };
