# safe: ruby.path.file-access
# The callback keeps the base name only.
class DocsController < ApplicationController
  before_action :load_path

  def show
    send_file @path
  end

  private

  def load_path
    @path = "/srv/docs/" + File.basename(params[:path])
  end
end
