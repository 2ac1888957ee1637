# safe: ruby.cmdi.shell
# The helper in another file quotes the folder name.
require_relative "command_builder"

class ExportsController < ApplicationController
  def create
    cmd = CommandBuilder.archive(params[:folder])
    system(cmd)
  end
end
