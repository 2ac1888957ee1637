# The options hash carries the request value under :dir.
class ArchivesController < ApplicationController
  def fetch
    opts = { dir: params[:dir], format: "zip" }
    send_file File.join("/srv/archives", opts[:dir]) # vuln: ruby.path.file-access
  end
end
