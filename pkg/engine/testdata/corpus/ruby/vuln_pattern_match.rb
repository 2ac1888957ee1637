# Pattern matching binds the request value and runs it.
class OpsController < ApplicationController
  def run
    case { action: params[:action_name], target: params[:target] }
    in { action: "restart", target: String => svc }
      system("systemctl restart #{svc}") # vuln: ruby.cmdi.shell
    in { action: "status" }
      system("uptime")
    end
  end
end
