# A tool path from the environment and a pipe opened with Kernel#open.
class MaintenanceJob
  def run
    system("#{ENV['BACKUP_TOOL']} --all") # vuln: ruby.cmdi.shell
  end
end

class FeedsController < ApplicationController
  def import
    data = open(params[:source]).read # vuln: ruby.cmdi.shell
    render plain: data.size
  end
end
