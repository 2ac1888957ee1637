# Weak cipher and digest algorithms chosen by name.
require "openssl"

class Vault
  CIPHER = "des-ede3-cbc"

  def seal(data, key)
    cipher = OpenSSL::Cipher.new(CIPHER) # vuln: ruby.crypto.weak-cipher
    cipher.encrypt
    cipher.key = key
    cipher.update(data) + cipher.final
  end

  def fingerprint(data)
    OpenSSL::Digest.new("SHA1").hexdigest(data) # vuln: ruby.crypto.weak-hash
  end
end
