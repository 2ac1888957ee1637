# safe: ruby.path.file-access
# The instance variable holds a base name only.
class DocumentsController < ApplicationController
  def show
    load_name
    render_doc
  end

  private

  def load_name
    @name = File.basename(params[:name])
  end

  def render_doc
    @body = File.read("/srv/docs/#{@name}")
  end
end
