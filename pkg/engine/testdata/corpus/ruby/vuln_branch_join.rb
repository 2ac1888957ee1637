# A value assigned on one branch of an if reaches the query after the join.
class ReportsController < ApplicationController
  def index
    filter = "1 = 1"
    if params[:mine]
      filter = "owner = '#{params[:owner]}'"
    end
    @reports = Report.where(filter) # vuln: ruby.sqli.string-query
  end
end
