# The request value is the second element and that element is used.
class HostsController < ApplicationController
  def check
    parts = ["ping", params[:host]]
    system("#{parts[0]} -c 1 #{parts[1]}") # vuln: ruby.cmdi.shell
  end
end
