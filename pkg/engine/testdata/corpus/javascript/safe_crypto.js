// safe: js.crypto.weak-hash js.crypto.weak-cipher js.crypto.weak-random
const crypto = require("crypto");

function hashContent(content) {
  return crypto.createHash("sha256").update(content).digest("hex");
}

function encrypt(key, text) {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", key, iv);
  return Buffer.concat([iv, cipher.update(text), cipher.final(), cipher.getAuthTag()]);
}

function resetToken() {
  return crypto.randomBytes(32).toString("hex");
}

function jitter(ms) {
  return ms + Math.floor(Math.random() * 100);
}

module.exports = { hashContent, encrypt, resetToken, jitter };
