# An attribute writer stores the request value; the reader returns it.
class Upload
  attr_accessor :filename

  def target
    "/srv/uploads/#{filename}"
  end
end

class UploadsController < ApplicationController
  def create
    upload = Upload.new
    upload.filename = params[:filename]
    File.write(upload.target, request.raw_post) # vuln: ruby.path.file-access
  end
end
