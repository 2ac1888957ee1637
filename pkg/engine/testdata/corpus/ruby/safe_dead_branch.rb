# safe: ruby.cmdi.shell
# The branch that would use the request value can never run.
class ToolsController < ApplicationController
  def trace
    target = "localhost"
    if false
      target = params[:host]
    end
    system("traceroute #{target}")
  end
end
