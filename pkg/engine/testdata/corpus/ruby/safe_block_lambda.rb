# safe: ruby.cmdi.shell
# The lambda and the block receive converted numbers only.
class JobsController < ApplicationController
  def run
    runner = ->(arg) { system("convert page#{arg}.png") }
    runner.call(params[:page].to_i)
    params[:ids].to_s.split(",").map(&:to_i).each do |n|
      system("touch /tmp/job#{n.to_i}")
    end
  end
end
