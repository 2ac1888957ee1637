# Weak random tokens in cookies and the session, request data in the
# session, and a cookie without the Secure flag.
class SessionsController < ApplicationController
  def create
    token = rand(10**12).to_s(36)
    cookies[:remember] = token # vuln: ruby.weakrand.security-use
    session[:nonce] = Random.new.rand(1_000_000) # vuln: ruby.weakrand.security-use
    session[:role] = params[:role] # vuln: ruby.trustbound.session
    cookies[:theme] = { value: params[:theme], httponly: true } # vuln: ruby.cookie.insecure
  end
end
