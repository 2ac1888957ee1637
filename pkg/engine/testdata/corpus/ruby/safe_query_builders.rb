# safe: ruby.sqli.string-query
# Hash conditions, bound values, allow-listed columns and quoting.
class ProductsController < ApplicationController
  COLUMNS = %w[name price].freeze

  def index
    scope = Product.where(active: true, sku: params[:sku])
    requested = params[:column]
    column = COLUMNS.include?(requested) ? requested : "name"
    @list = scope.order(column)
    @named = Product.where("name = ?", params[:name])
    @quoted = Product.where("sku = #{Product.connection.quote(params[:sku])}")
    @clean = Product.where(ActiveRecord::Base.sanitize_sql_array(["tag = ?", params[:tag]]))
    @page = Product.limit(20).offset(params[:page].to_i * 20)
  end
end
