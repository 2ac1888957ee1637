# A recursive helper joins path segments taken from the request.
class FilesController < ApplicationController
  def show
    path = join_all(params[:segments].to_s.split("/"), 0)
    send_file path # vuln: ruby.path.file-access
  end

  private

  def join_all(parts, i)
    return "/srv/files" if i >= parts.length
    "#{join_all(parts, i + 1)}/#{parts[i]}"
  end
end
