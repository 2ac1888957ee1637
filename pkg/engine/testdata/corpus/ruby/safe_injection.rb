# safe: ruby.sqli.string-query ruby.cmdi.shell ruby.code.eval
# The same operations with bound parameters, argument lists and lookup tables.
require "open3"
require "shellwords"

class UsersController < ApplicationController
  SORTS = { "name" => :name, "created" => :created_at }.freeze
  ACTIONS = { "summary" => :summary, "totals" => :totals }.freeze

  def index
    name = params[:name]
    @users = User.where("name = ?", name)
    @by_name = User.where(name: params[:name])
    @sorted = User.order(:created_at)
    @raw = User.find_by_sql(["SELECT * FROM users WHERE email = ?", params[:email]])
    @page = User.limit(20).offset(params[:page].to_i * 20)
    @rows = ActiveRecord::Base.connection.execute(search_sql(params[:q]))
  end

  def ping
    host = params.require(:host)
    system("ping", "-c", "1", host)
    out = `uptime`
    safe = Shellwords.escape(host)
    trace = %x(traceroute #{safe})
    stdout, status = Open3.capture2("dig", host)
    IO.popen(["whois", request.headers["X-Domain"]])
    render plain: out
  end

  def calc
    expr = params[:expr].to_i
    result = eval("1 + #{expr}")
    report = Report.new
    report.public_send(ACTIONS.fetch("summary"))
    klass = "Report".constantize
    render inline: "<p><%= params[:tpl] %></p>"
  end

  private

  def search_sql(_term)
    ActiveRecord::Base.sanitize_sql_array(["SELECT * FROM posts WHERE title LIKE ?", "%#{_term}%"])
  end
end
