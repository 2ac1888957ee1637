# Request data reaches commands through a lambda and an iterator block.
class JobsController < ApplicationController
  def run
    runner = ->(arg) { system("convert #{arg}") } # vuln: ruby.cmdi.shell
    runner.call(params[:file])
    params[:names].to_s.split(",").each do |n|
      system("touch /tmp/#{n}") # vuln: ruby.cmdi.shell
    end
  end
end
