# A before_action callback stores the request path in an instance variable.
class DocsController < ApplicationController
  before_action :load_path

  def show
    send_file @path # vuln: ruby.path.file-access
  end

  private

  def load_path
    @path = "/srv/docs/" + params[:path]
  end
end
