# Request data reaching SQL, shell and code execution in a Rails controller.
require "open3"

class UsersController < ApplicationController
  def index
    name = params[:name]
    @users = User.where("name = '#{name}'") # vuln: ruby.sqli.string-query
    @sorted = User.order(params[:sort]) # vuln: ruby.sqli.string-query
    @raw = User.find_by_sql("SELECT * FROM users WHERE email = '" + params[:email] + "'") # vuln: ruby.sqli.string-query
    @rows = ActiveRecord::Base.connection.execute(search_sql(params[:q])) # vuln: ruby.sqli.string-query
  end

  def ping
    host = params.require(:host)
    system("ping -c 1 #{host}") # vuln: ruby.cmdi.shell
    out = `nslookup #{host}` # vuln: ruby.cmdi.shell
    trace = %x(traceroute #{host}) # vuln: ruby.cmdi.shell
    stdout, status = Open3.capture2("dig " + host) # vuln: ruby.cmdi.shell
    IO.popen("whois #{request.headers['X-Domain']}") # vuln: ruby.cmdi.shell
    render plain: out
  end

  def calc
    expr = params[:expr]
    result = eval(expr) # vuln: ruby.code.eval
    report = Report.new
    report.send(params[:action_name]) # vuln: ruby.code.eval
    klass = params[:type].constantize # vuln: ruby.code.eval
    render inline: "<p>#{params[:tpl]}</p>" # vuln: ruby.code.eval
  end

  private

  def search_sql(term)
    "SELECT * FROM posts WHERE title LIKE '%#{term}%'"
  end
end
