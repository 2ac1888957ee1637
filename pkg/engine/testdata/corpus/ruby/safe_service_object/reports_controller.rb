# safe: ruby.sqli.string-query
# The service object binds the region as a value.
require_relative "report_query"

class ReportsController < ApplicationController
  def show
    @rows = ReportQuery.new(params[:region]).call
  end
end
