# safe: ruby.sqli.string-query
# The mode is fixed to "exact", so the branch with request text is dead.
class SearchController < ApplicationController
  def show
    mode = "exact"
    clause = case mode
             when "raw" then "title LIKE '%#{params[:q]}%'"
             when "exact" then "title = 'news'"
             else "1 = 0"
             end
    @hits = Article.where(clause)
  end
end
