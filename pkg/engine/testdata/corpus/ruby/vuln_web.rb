# Request data in HTML output, file paths, outgoing requests, redirects and deserialization.
require "net/http"
require "open-uri"
require "yaml"

class PagesController < ApplicationController
  def greet
    @greeting = "<h1>Hello #{params[:name]}</h1>".html_safe # vuln: ruby.xss.html-safe
    @bio = raw(params[:bio]) # vuln: ruby.xss.html-safe
    comment = cookies[:last_comment]
    @comment = comment.html_safe # vuln: ruby.xss.html-safe
  end

  def download
    name = params[:file]
    send_file "/srv/reports/#{name}" # vuln: ruby.path.file-access
    data = File.read(Rails.root.join("docs", params[:doc])) # vuln: ruby.path.file-access
    File.open("/tmp/uploads/" + name, "wb") { |f| f.write(request.body.read) } # vuln: ruby.path.file-access
  end

  def preview
    url = params[:url]
    body = Net::HTTP.get(URI(url)) # vuln: ruby.ssrf.request
    page = URI.open(url).read # vuln: ruby.ssrf.request
    resp = HTTParty.get(params[:feed]) # vuln: ruby.ssrf.request
    render plain: body
  end

  def back
    redirect_to params[:return_to] # vuln: ruby.redirect.open
  end

  def login_done
    target = request.referer
    redirect_to target, allow_other_host: true # vuln: ruby.redirect.open
  end

  def restore
    state = Marshal.load(Base64.decode64(cookies[:state])) # vuln: ruby.deser.unsafe-load
    settings = YAML.load(request.body.read) # vuln: ruby.deser.unsafe-load
    render json: settings
  end
end
