const jwt = require("jsonwebtoken");

function verify(token, key) {
  return jwt.verify(token, key, { algorithms: ["HS256", "none"] }); // vuln: js.jwt.none-algorithm
}

module.exports = { verify };
