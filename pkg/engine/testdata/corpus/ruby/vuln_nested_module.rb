# A class method of a class nested in modules builds the URL.
require "net/http"

module Integrations
  module Webhooks
    class Target
      def self.url_for_hook(host)
        "https://#{host}/hook"
      end
    end
  end
end

class HooksController < ApplicationController
  def ping
    url = Integrations::Webhooks::Target.url_for_hook(params[:host])
    Net::HTTP.get(URI(url)) # vuln: ruby.ssrf.request
  end
end
