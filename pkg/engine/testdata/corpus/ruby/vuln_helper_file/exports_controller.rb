# The command is built by a helper module in another file.
require_relative "command_builder"

class ExportsController < ApplicationController
  def create
    cmd = CommandBuilder.archive(params[:folder])
    system(cmd) # vuln: ruby.cmdi.shell
  end
end
