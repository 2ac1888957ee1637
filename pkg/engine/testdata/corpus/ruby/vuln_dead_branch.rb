# The debug flag is on, so the request value is what reaches the shell.
class ToolsController < ApplicationController
  VERBOSE = true

  def trace
    target = "localhost"
    if VERBOSE
      target = params[:host]
    end
    system("traceroute #{target}") # vuln: ruby.cmdi.shell
  end
end
