package dataflow_test

import "testing"

// Object-oriented flows: inheritance, overriding, static state, recursion
// and whole-program facts that need more than one round.
func TestFlowObjectsJava(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"override reached through a factory typed with the base", one("app/H.java", `package app;
import javax.servlet.http.*;
abstract class Base { abstract void run(String c) throws Exception; }
class Shell extends Base { void run(String c) throws Exception { Runtime.getRuntime().exec(c); } } // want:java.cmdi.exec
class Echo extends Base { void run(String c) { System.out.println("ok"); } }
public class H extends HttpServlet {
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws java.io.IOException {
    Base b = make();
    try { b.run(req.getParameter("c")); } catch (Exception e) {}
  }
  static Base make() { return new Shell(); }
}
`)},
		{"a known allocation reaches only its own override", one("app/H.java", `package app;
import javax.servlet.http.*;
abstract class Base { abstract void run(String c) throws Exception; }
class Shell extends Base { void run(String c) throws Exception { Runtime.getRuntime().exec(c); } }
class Echo extends Base { void run(String c) { System.out.println("ok"); } }
public class H extends HttpServlet {
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws java.io.IOException {
    Base b = new Echo();
    try { b.run(req.getParameter("c")); } catch (Exception e) {}
  }
}
`)},
		{"super call passes taint to the parent", one("app/H.java", `package app;
import javax.servlet.http.*;
class Parent { void run(String c) throws java.io.IOException { Runtime.getRuntime().exec(c); } } // want:java.cmdi.exec
class Child extends Parent { void run(String c) throws java.io.IOException { super.run("prefix " + c); } }
public class H extends HttpServlet {
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws java.io.IOException {
    new Child().run(req.getParameter("c"));
  }
}
`)},
		{"static field written by one method read by another", one("app/H.java", `package app;
import javax.servlet.http.*;
public class H extends HttpServlet {
  static String last = "ls";
  protected void doPost(HttpServletRequest req, HttpServletResponse resp) { last = req.getParameter("c"); }
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws java.io.IOException {
    Runtime.getRuntime().exec(last); // want:java.cmdi.exec
  }
}
`)},
		{"static constant field", one("app/H.java", `package app;
import javax.servlet.http.*;
public class H extends HttpServlet {
  static final String CMD = "ls";
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws java.io.IOException {
    Runtime.getRuntime().exec(CMD);
  }
}
`)},
		{"recursive helper", one("app/H.java", `package app;
import javax.servlet.http.*;
public class H extends HttpServlet {
  static String build(String s, int n) { return n == 0 ? s : build(s + "x", n - 1); }
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws java.io.IOException {
    Runtime.getRuntime().exec(build(req.getParameter("c"), 3)); // want:java.cmdi.exec
    Runtime.getRuntime().exec(build("ls", 3));
  }
}
`)},
		{"setter and getter of a bean", one("app/H.java", `package app;
import javax.servlet.http.*;
class Bean { private String v; void setV(String v) { this.v = v; } String getV() { return v; } }
public class H extends HttpServlet {
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws java.io.IOException {
    Bean tainted = new Bean();
    tainted.setV(req.getParameter("c"));
    Runtime.getRuntime().exec(tainted.getV()); // want:java.cmdi.exec
  }
}
`)},
		{"exception message carries no request data", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    try {
      throw new IllegalStateException("fixed");
    } catch (IllegalStateException e) {
      Runtime.getRuntime().exec(e.getMessage());
    }
  }`)},
		{"spring request parameter", one("app/C.java", `package app;
import org.springframework.web.bind.annotation.*;
@RestController
public class C {
  @GetMapping("/run")
  public String run(@RequestParam String c) throws Exception {
    Runtime.getRuntime().exec(c); // want:java.cmdi.exec
    return "ok";
  }
  public String notAHandler(String c) throws Exception {
    Runtime.getRuntime().exec("ls");
    return "ok";
  }
}
`)},
	})
}

func TestFlowObjectsPython(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"method of a subclass", py(`
class Base:
    def run(self, c):
        pass
class Shell(Base):
    def run(self, c):
        os.system(c)  # want:python.cmdi.shell
def h():
    Shell().run(request.args.get("c"))
`)},
		{"attribute set in one method read in another", py(`
class Job:
    def __init__(self):
        self.cmd = "ls"
    def load(self):
        self.cmd = request.args.get("c")
    def run(self):
        os.system(self.cmd)  # want:python.cmdi.shell
def h():
    j = Job()
    j.load()
    j.run()
`)},
		{"module global updated by a handler", py(`
CMD = "ls"
def set_cmd():
    global CMD
    CMD = request.args.get("c")
def run():
    os.system(CMD)  # want:python.cmdi.shell
`)},
		{"module constant", py(`
CMD = "ls"
def run():
    os.system(CMD)
`)},
		{"default parameter value", py(`
def run(cmd="ls"):
    os.system(cmd)
def h():
    request.args.get("c")
    run()
`)},
		{"varargs", py(`
def run(*cmds):
    for c in cmds:
        os.system(c)  # want:python.cmdi.shell
def h():
    run("ls", request.args.get("c"))
`)},
		{"decorated flask view", one("views.py", `from flask import Flask
import os
app = Flask(__name__)
@app.route("/run/<cmd>")
def run(cmd):
    os.system(cmd)  # want:python.cmdi.shell
def helper(cmd):
    os.system("ls")
`)},
		{"lambda passed to map", py(`
def h():
    cmds = [request.args.get("c")]
    list(map(lambda c: os.system(c), cmds))  # want:python.cmdi.shell
`)},
		{"helper module in the repository", []src{
			{"app/util.py", "import os\n\ndef shell(c):\n    os.system(c)  # want:python.cmdi.shell\n"},
			{"app/views.py", "from flask import request\nfrom app.util import shell\n\ndef h():\n    shell(request.args.get('c'))\n    shell('ls')\n"},
		}},
	})
}

func TestFlowObjectsJavaScript(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"subclass method", js(`
class Base { run(c) {} }
class Shell extends Base { run(c) { cp.exec(c); } } // want:js.cmdi.exec
app.get("/a", (req, res) => { new Shell().run(req.query.c); });
`)},
		{"callback receives tainted data", js(`
function withInput(req, cb) { cb(req.query.c); }
app.get("/a", (req, res) => {
  withInput(req, (c) => cp.exec(c)); // want:js.cmdi.exec
});
`)},
		{"callback receives a constant", js(`
function withConst(cb) { cb("ls"); }
app.get("/a", (req, res) => {
  withConst((c) => cp.exec(c));
});
`)},
		{"promise then", js(`
app.get("/a", (req, res) => {
  Promise.resolve(req.query.c).then((c) => cp.exec(c)); // want:js.cmdi.exec
});
`)},
		{"async handler with await", js(`
async function load(req) { return req.query.c; }
app.get("/a", async (req, res) => {
  const c = await load(req);
  cp.exec(c); // want:js.cmdi.exec
});
`)},
		{"spread into an array", js(`
app.get("/a", (req, res) => {
  const base = ["ls"];
  const all = [...base, req.query.c];
  cp.exec(all.join(" ")); // want:js.cmdi.exec
});
`)},
		{"object spread keeps other keys clean", js(`
app.get("/a", (req, res) => {
  const o = { ...{ safe: "ls" }, bad: req.query.c };
  cp.exec(o.safe);
});
`)},
	})
}

func TestFlowObjectsGo(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"interface call reaches the implementation", golang(`
type runner interface{ run(c string) }
type shell struct{}
func (shell) run(c string) { exec.Command("sh", "-c", c).Run() } // want:go.cmdi.exec
type noop struct{}
func (noop) run(c string) {}
func pick(k string) runner {
	if k == "a" {
		return noop{}
	}
	return shell{}
}
func h(w http.ResponseWriter, r *http.Request) {
	x := pick(r.Header.Get("k"))
	x.run(r.FormValue("c"))
}
`)},
		{"a known value reaches only its own method", golang(`
type runner interface{ run(c string) }
type shell struct{}
func (shell) run(c string) { exec.Command("sh", "-c", c).Run() }
type noop struct{}
func (noop) run(c string) {}
func h(w http.ResponseWriter, r *http.Request) {
	var x runner = noop{}
	x.run(r.FormValue("c"))
}
`)},
		{"package variable set by one handler", golang(`
var last = "ls"
func set(w http.ResponseWriter, r *http.Request) { last = r.FormValue("c") }
func run(w http.ResponseWriter, r *http.Request) {
	exec.Command("sh", "-c", last).Run() // want:go.cmdi.exec
}
`)},
		{"goroutine closure", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	c := r.FormValue("c")
	go func() {
		exec.Command("sh", "-c", c).Run() // want:go.cmdi.exec
	}()
}
`)},
		{"strings builder", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	b.WriteString("ping ")
	b.WriteString(r.FormValue("host"))
	exec.Command("sh", "-c", b.String()).Run() // want:go.cmdi.exec
}
`)},
	})
}

func TestFlowObjectsPHPAndRuby(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"php static method", php(`
class Shell { static function run($c) { system($c); } } // want:php.cmdi.shell
Shell::run($_GET['c']);
Shell::run("ls");
`)},
		{"php subclass", php(`
class Base { function run($c) {} }
class Shell extends Base { function run($c) { system($c); } } // want:php.cmdi.shell
$s = new Shell();
$s->run($_GET['c']);
`)},
		{"php closure with use", php(`
$c = $_GET['c'];
$f = function () use ($c) { system($c); }; // want:php.cmdi.shell
$f();
`)},
		{"ruby module function", rails(`  def run
    Shell.go(params[:c])
  end
end
module Shell
  def self.go(c)
    system(c) # want:ruby.cmdi.shell
  end
`)},
		{"ruby instance variable across actions", rails(`  def run
    @cmd = params[:c]
    execute
  end

  def execute
    system(@cmd) # want:ruby.cmdi.shell
  end
`)},
		{"ruby constant", rails(`  CMD = "ls"
  def run
    system(CMD)
  end
`)},
	})
}

// A method called on a receiver of unknown type reaches the one
// repository class that declares it, parameters with defaults counted.
func TestFlowUntypedReceivers(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"one declaring class", py(`
class Runner:
    def execute_shell(self, c, mode="x"):
        os.system(c)  # want:python.cmdi.shell
def dispatch(obj):
    obj.execute_shell(request.args.get("c"))
`)},
		{"one declaring class, every argument given", py(`
class Runner:
    def execute_shell(self, c, mode="x"):
        os.system(c)  # want:python.cmdi.shell
def dispatch(obj):
    obj.execute_shell(request.args.get("c"), "y")
`)},
		{"too few arguments for the only declaration", py(`
class Runner:
    def execute_shell(self, c, mode):
        os.system(c)
def dispatch(obj):
    obj.execute_shell(request.args.get("c"))
`)},
	})
}
