# Weak cryptography, hard-coded credentials and disabled TLS verification.
require "digest"
require "net/http"

class Account
  API_KEY = "sk_live_9f8e7d6c5b4a" # vuln: ruby.secrets.hardcoded-credential

  def self.hash_password(password)
    Digest::MD5.hexdigest(password) # vuln: ruby.crypto.weak-password-hash
  end

  def reset_token!
    self.reset_token = rand(36**20).to_s(36) # vuln: ruby.crypto.weak-random
    self.otp = (0...6).map { ("0".."9").to_a.sample }.join # vuln: ruby.crypto.weak-random
    self.token_digest = Digest::SHA1.hexdigest(reset_token) # vuln: ruby.crypto.weak-password-hash
  end
end

Mailer.configure do |config|
  config.password = "mailer-pass-2024" # vuln: ruby.secrets.hardcoded-credential
end
SMTP = { user_name: "app", password: "Xq9!smtpSecret" } # vuln: ruby.secrets.hardcoded-credential

http = Net::HTTP.new("partner.example.com", 443)
http.use_ssl = true
http.verify_mode = OpenSSL::SSL::VERIFY_NONE # vuln: ruby.tls.verify-disabled
conn = Faraday.new("https://partner.example.com", ssl: { verify: false }) # vuln: ruby.tls.verify-disabled
