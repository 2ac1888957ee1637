# safe: ruby.redirect.open
# Redirects to route helpers with request values as parameters.
class ReturnsController < ApplicationController
  def done
    redirect_to order_path(id: params[:id], tab: params[:tab])
  end

  def back
    redirect_to orders_url(page: params[:page])
  end
end
