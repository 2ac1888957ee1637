# An instance variable set in a before_action-style method carries the path.
class DocumentsController < ApplicationController
  def show
    load_name
    render_doc
  end

  private

  def load_name
    @name = params[:name]
  end

  def render_doc
    @body = File.read("/srv/docs/#{@name}") # vuln: ruby.path.file-access
  end
end
