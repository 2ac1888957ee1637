// safe: js.crypto.cipher-without-iv js.crypto.weak-cipher
const crypto = require("crypto");

const ALGORITHM = "aes-256-gcm";

function sealNote(password, salt, text) {
  const key = crypto.scryptSync(password, salt, 32);
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv(ALGORITHM, key, iv);
  const body = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
}

module.exports = { sealNote };
