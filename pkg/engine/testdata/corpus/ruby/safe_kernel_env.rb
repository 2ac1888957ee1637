# safe: ruby.cmdi.shell ruby.xss.html-safe ruby.path.file-access
# Environment values passed as arguments, records found by a request id,
# and escaped output.
class MaintenanceJob
  def run
    system("pg_dump", ENV.fetch("DATABASE_NAME", "app"))
  end
end

class FeedsController < ApplicationController
  def show
    feed = Feed.find(params[:id])
    system("touch /var/feeds/#{feed.slug}")
    @title = "<b>#{helpers.strip_tags(params[:title])}</b>".html_safe
    @label = h(params[:label]).html_safe
    @note = CGI.escapeHTML(params[:note].to_s).html_safe
  end
end
