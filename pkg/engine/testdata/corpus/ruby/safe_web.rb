# safe: ruby.xss.html-safe ruby.path.file-access ruby.ssrf.request ruby.redirect.open ruby.deser.unsafe-load
# The same operations with escaping, fixed paths and hosts, and JSON.
require "net/http"
require "json"

class PagesController < ApplicationController
  def greet
    @greeting = "<h1>Hello #{ERB::Util.html_escape(params[:name])}</h1>".html_safe
    @bio = raw(sanitize(params[:bio]))
    @title = "<h1>Welcome</h1>".html_safe
    comment = cookies[:last_comment]
    @comment = comment
  end

  def download
    name = File.basename(params[:file])
    send_file "/srv/reports/#{name}"
    data = File.read(Rails.root.join("docs", "index.md"))
    File.open("/tmp/uploads/" + name, "wb") { |f| f.write(request.body.read) }
  end

  def preview
    query = URI.encode_www_form(q: params[:q])
    body = Net::HTTP.get(URI("https://api.example.com/search?#{query}"))
    resp = HTTParty.get("https://feeds.example.com/latest.xml", query: { id: params[:feed] })
    render plain: body
  end

  def back
    redirect_to root_path
  end

  def login_done
    redirect_to dashboard_path(tab: params[:tab])
  end

  def restore
    state = JSON.parse(Base64.decode64(cookies[:state]))
    settings = YAML.safe_load(request.body.read)
    render json: settings
  end
end
