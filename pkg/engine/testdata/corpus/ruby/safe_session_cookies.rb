# safe: ruby.weakrand.security-use ruby.trustbound.session ruby.cookie.insecure
# Secure random tokens, server-derived session values, secure cookies.
require "securerandom"

class SessionsController < ApplicationController
  ROLES = %w[viewer editor].freeze

  def create
    token = SecureRandom.urlsafe_base64(24)
    cookies[:remember] = token
    session[:nonce] = SecureRandom.random_number(1_000_000)
    session[:role] = "viewer"
    session[:page] = params[:page].to_i
    cookies[:theme] = { value: "dark", secure: true, httponly: true }
    @shuffle_seed = rand(10)
  end
end
