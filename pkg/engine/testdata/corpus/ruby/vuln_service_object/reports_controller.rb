# A service object in another file runs the report query.
require_relative "report_query"

class ReportsController < ApplicationController
  def show
    @rows = ReportQuery.new(params[:region]).call
  end
end
