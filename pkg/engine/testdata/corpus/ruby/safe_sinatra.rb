# safe: ruby.path.file-access ruby.cmdi.shell ruby.xss.html-safe
# The same routes with a base name, a quoted argument and escaping.
require "sinatra"
require "shellwords"
require "erb"

get "/logs/:name" do |name|
  File.read("/var/log/app/#{File.basename(name)}")
end

post "/lookup" do
  `host #{params[:domain].to_s.shellescape}`
end

get "/hello" do
  body "<p>Hello #{ERB::Util.html_escape(params[:who])}</p>".html_safe
end
