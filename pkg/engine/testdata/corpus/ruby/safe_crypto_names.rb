# safe: ruby.crypto.weak-cipher ruby.crypto.weak-hash
# AES-GCM and SHA-256.
require "openssl"

class Vault
  CIPHER = "aes-256-gcm"

  def seal(data, key)
    cipher = OpenSSL::Cipher.new(CIPHER)
    cipher.encrypt
    cipher.key = key
    cipher.update(data) + cipher.final
  end

  def fingerprint(data)
    OpenSSL::Digest.new("SHA256").hexdigest(data)
  end
end
