const crypto = require("crypto");

function hashPassword(password) {
  return crypto.createHash("md5").update(password).digest("hex"); // vuln: js.crypto.weak-hash
}

function encrypt(key, text) {
  const cipher = crypto.createCipheriv("des-ede3-cbc", key, Buffer.alloc(8)); // vuln: js.crypto.weak-cipher
  return cipher.update(text, "utf8", "hex") + cipher.final("hex");
}

function resetToken() {
  const token = Math.random().toString(36).slice(2); // vuln: js.crypto.weak-random
  return token;
}

module.exports = { hashPassword, encrypt, resetToken };
