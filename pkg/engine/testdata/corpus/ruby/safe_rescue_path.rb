# safe: ruby.sqli.string-query
# Both the normal and the rescue path use numbers.
class ImportsController < ApplicationController
  def create
    begin
      limit = Integer(params[:limit])
      @rows = Row.order("id LIMIT #{limit}")
    rescue ArgumentError
      @rows = Row.order("id LIMIT 50")
    end
  end
end
