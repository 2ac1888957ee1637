package dataflow_test

import "testing"

// rails wraps actions in a controller.
func rails(actions string) []src {
	return one("app/controllers/items_controller.rb", "class ItemsController < ApplicationController\n"+actions+"end\n")
}

func TestFlowRuby(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"params to system", rails(`  def run
    system("ping " + params[:host]) # want:ruby.cmdi.shell
  end
`)},
		{"constant command", rails(`  def run
    params[:host]
    system("ping localhost")
  end
`)},
		{"element after a splat counts from the end", rails(`  def run
    *rest, last = ["ls", "-l", params[:c]]
    system(last) # want:ruby.cmdi.shell
  end
`)},
		{"interpolation", rails(`  def run
    h = params[:host]
    system("ping #{h}") # want:ruby.cmdi.shell
  end
`)},
		{"backticks", rails("  def run\n    h = params[:host]\n    `ping #{h}` # want:ruby.cmdi.shell\n  end\n")},
		{"shellescape sanitizes", rails(`  def run
    require "shellwords"
    h = Shellwords.escape(params[:host])
    system("ping #{h}")
  end
`)},
		{"to_i sanitizes", rails(`  def run
    n = params[:n].to_i
    system("sleep #{n}")
  end
`)},
		{"sql where with interpolation", rails(`  def index
    Item.where("name = '#{params[:name]}'") # want:ruby.sqli.string-query
  end
`)},
		{"sql where with a hash", rails(`  def index
    Item.where(name: params[:name])
  end
`)},
		{"helper method", rails(`  def run
    shell(params[:c])
    shell("ls")
  end

  private

  def shell(c)
    system(c) # want:ruby.cmdi.shell
  end
`)},
		{"hash element", rails(`  def run
    h = { safe: "ls", bad: params[:c] }
    system(h[:bad]) # want:ruby.cmdi.shell
    system(h[:safe])
  end
`)},
		{"array element", rails(`  def run
    a = ["ls"]
    a << params[:c]
    system(a[1]) # want:ruby.cmdi.shell
    system(a[0])
  end
`)},
		{"block parameter", rails(`  def run
    params[:cmds].each do |c|
      system(c) # want:ruby.cmdi.shell
    end
  end
`)},
		{"conditional assignment", rails(`  def run
    c = "ls"
    c = params[:c] if params[:force]
    system(c) # want:ruby.cmdi.shell
  end
`)},
	})
}
