# safe: ruby.ssrf.request
# The nested class method ignores its argument and returns a fixed host.
require "net/http"

module Integrations
  module Webhooks
    class Target
      def self.url_for_hook(_host)
        "https://hooks.example.com/hook"
      end
    end
  end
end

class HooksController < ApplicationController
  def ping
    url = Integrations::Webhooks::Target.url_for_hook(params[:host])
    Net::HTTP.get(URI(url))
  end
end
