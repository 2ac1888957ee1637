# safe: ruby.cmdi.shell
# Only the constant first element reaches the shell.
class HostsController < ApplicationController
  def check
    parts = ["uptime", params[:host]]
    system(parts[0])
  end
end
