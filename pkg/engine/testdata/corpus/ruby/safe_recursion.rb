# safe: ruby.path.file-access
# The recursion only counts; the path is built from the count.
class FilesController < ApplicationController
  def show
    depth = count_parts(params[:segments].to_s.split("/"), 0)
    send_file "/srv/files/level#{depth}.txt"
  end

  private

  def count_parts(parts, i)
    return 0 if i >= parts.length
    1 + count_parts(parts, i + 1)
  end
end
