# safe: ruby.cmdi.shell
# Only fixed commands run, whichever pattern matches.
class OpsController < ApplicationController
  def run
    case { action: params[:action_name], target: params[:target] }
    in { action: "restart", target: "web" | "worker" => svc }
      system("systemctl restart app-worker")
    in { action: "status" }
      system("uptime")
    end
  end
end
