# The mode is fixed to "raw", which passes the request text to the query.
class SearchController < ApplicationController
  def show
    mode = "raw"
    clause = case mode
             when "raw" then "title LIKE '%#{params[:q]}%'"
             when "exact" then "title = 'news'"
             else "1 = 0"
             end
    @hits = Article.where(clause) # vuln: ruby.sqli.string-query
  end
end
