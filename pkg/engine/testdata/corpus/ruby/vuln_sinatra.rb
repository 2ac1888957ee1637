# A Sinatra application: route captures and params reach sinks.
require "sinatra"

get "/logs/:name" do |name|
  File.read("/var/log/app/#{name}") # vuln: ruby.path.file-access
end

post "/lookup" do
  `host #{params[:domain]}` # vuln: ruby.cmdi.shell
end

get "/hello" do
  body "<p>Hello #{params[:who]}</p>".html_safe # vuln: ruby.xss.html-safe
end
