# safe: ruby.path.file-access
# Only the fixed key is read back; the request value sits under another key.
class ArchivesController < ApplicationController
  def fetch
    opts = { dir: "monthly", label: params[:label] }
    opts[:label] = params[:other]
    send_file File.join("/srv/archives", opts[:dir])
  end
end
