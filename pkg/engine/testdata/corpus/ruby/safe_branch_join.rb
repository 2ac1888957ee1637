# safe: ruby.sqli.string-query
# Both branches assign fixed conditions; the request only picks one.
class ReportsController < ApplicationController
  def index
    filter = "archived = 0"
    if params[:mine]
      filter = "owner_id = 42"
    end
    @reports = Report.where(filter)
  end
end
