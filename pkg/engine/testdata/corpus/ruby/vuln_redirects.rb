# Redirects to locations from the request.
class ReturnsController < ApplicationController
  def done
    target = params[:next] || "/"
    redirect_to target # vuln: ruby.redirect.open
  end
end
