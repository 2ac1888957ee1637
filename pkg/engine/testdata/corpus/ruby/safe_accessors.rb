# safe: ruby.path.file-access
# The writer is given a base name.
class Upload
  attr_accessor :filename

  def target
    "/srv/uploads/#{filename}"
  end
end

class UploadsController < ApplicationController
  def create
    upload = Upload.new
    upload.filename = File.basename(params[:filename])
    File.write(upload.target, request.raw_post)
  end
end
