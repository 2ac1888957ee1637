# Request data in Active Record query methods on relations and models.
class ProductsController < ApplicationController
  def index
    scope = Product.where(active: true)
    @list = scope.order("#{params[:column]} ASC") # vuln: ruby.sqli.string-query
    @names = Product.pluck(params[:field]) # vuln: ruby.sqli.string-query
    @joined = Product.joins("LEFT JOIN tags ON tags.name = '#{params[:tag]}'") # vuln: ruby.sqli.string-query
    @exists = Product.exists?("sku = '#{params[:sku]}'") # vuln: ruby.sqli.string-query
  end
end
