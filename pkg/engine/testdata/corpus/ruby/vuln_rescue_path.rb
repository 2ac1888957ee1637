# The fallback in the rescue clause uses the raw request value.
class ImportsController < ApplicationController
  def create
    begin
      limit = Integer(params[:limit])
      @rows = Row.order("id LIMIT #{limit}")
    rescue ArgumentError
      @rows = Row.order("id LIMIT #{params[:limit]}") # vuln: ruby.sqli.string-query
    end
  end
end
