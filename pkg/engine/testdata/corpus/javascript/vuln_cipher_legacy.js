const crypto = require("crypto");

const ALGORITHM = "aes-256-cbc";

function sealNote(password, text) {
  const cipher = crypto.createCipher(ALGORITHM, password); // vuln: js.crypto.cipher-without-iv
  return cipher.update(text, "utf8", "base64") + cipher.final("base64");
}

function sealLegacy(key, text) {
  const mode = "bf-ecb";
  const cipher = crypto.createCipheriv(mode, key, null); // vuln: js.crypto.weak-cipher
  return cipher.update(text, "utf8", "hex") + cipher.final("hex");
}

module.exports = { sealNote, sealLegacy };
