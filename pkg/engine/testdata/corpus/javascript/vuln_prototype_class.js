var express = require("express");
var sqlite3 = require("sqlite3");

function AuditLog(db) {
  this.db = db;
  this.table = "audit";
}

AuditLog.prototype.byUser = function (user, done) {
  this.db.all("SELECT * FROM " + this.table + " WHERE user = '" + user + "'", done); // vuln: js.sqli.string-query
};

var log = new AuditLog(new sqlite3.Database("/var/lib/app/audit.db"));
var app = express();

app.get("/audit", function (req, res) {
  log.byUser(req.query.user, function (err, rows) {
    res.json(rows);
  });
});
