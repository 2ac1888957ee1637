# safe: ruby.secrets.hardcoded-credential ruby.crypto.weak-password-hash ruby.crypto.weak-random
# safe: ruby.tls.verify-disabled ruby.debug.rails-local-requests
# The same settings done safely.
require "bcrypt"
require "securerandom"
require "net/http"

class Account
  API_KEY = ENV.fetch("API_KEY")

  def self.hash_password(password)
    BCrypt::Password.create(password)
  end

  def reset_token!
    self.reset_token = SecureRandom.urlsafe_base64(32)
    self.otp = SecureRandom.random_number(1_000_000).to_s.rjust(6, "0")
    self.token_digest = Digest::SHA256.hexdigest(reset_token)
    self.etag = Digest::MD5.hexdigest(body)
    self.color = %w[red green blue].sample
  end
end

Mailer.configure do |config|
  config.password = ENV["MAILER_PASSWORD"]
end
SMTP = { user_name: "app", password: Rails.application.credentials.smtp_password }

http = Net::HTTP.new("partner.example.com", 443)
http.use_ssl = true
http.verify_mode = OpenSSL::SSL::VERIFY_PEER
conn = Faraday.new("https://partner.example.com", ssl: { verify: true, ca_file: "/etc/ssl/partner-ca.pem" })
