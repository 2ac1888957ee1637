package dataflow_test

import "testing"

const pyHead = "from flask import request\nimport os\nimport subprocess\nimport sqlite3\n"

func py(code string) []src { return one("app.py", pyHead+code) }

func TestFlowPython(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"direct source to sink", py(`
def h():
    os.system(request.args.get("c"))  # want:python.cmdi.shell
`)},
		{"constant argument is safe", py(`
def h():
    request.args.get("c")
    os.system("ls -l")
`)},
		{"through assignments and concatenation", py(`
def h():
    a = request.args.get("c")
    b = a
    c = "ping " + b
    os.system(c)  # want:python.cmdi.shell
`)},
		{"reassigned with a constant before the sink", py(`
def h():
    a = request.args.get("c")
    a = "ls"
    os.system(a)
`)},
		{"f-string and format", py(`
def h():
    a = request.args.get("c")
    os.system(f"ping {a}")  # want:python.cmdi.shell
    os.system("ping {}".format(a))  # want:python.cmdi.shell
    os.system("ping %s" % a)  # want:python.cmdi.shell
`)},
		{"shlex.quote sanitizes the command", py(`
import shlex
def h():
    a = request.args.get("c")
    os.system("ping " + shlex.quote(a))
`)},
		{"integer conversion sanitizes", py(`
def h():
    n = int(request.args.get("n"))
    os.system("sleep " + str(n))
`)},
		{"taint in one branch reaches the join", py(`
def h(flag):
    if flag:
        cmd = request.args.get("c")
    else:
        cmd = "ls"
    os.system(cmd)  # want:python.cmdi.shell
`)},
		{"constant false branch is dead", py(`
def h():
    cmd = "ls"
    if False:
        cmd = request.args.get("c")
    os.system(cmd)
`)},
		{"constant condition folded", py(`
def h():
    mode = "safe"
    cmd = request.args.get("c")
    if mode == "safe":
        cmd = "ls"
    os.system(cmd)
`)},
		{"loop carries taint around the back edge", py(`
def h():
    cmd = "ls"
    for i in range(3):
        os.system(cmd)  # want:python.cmdi.shell
        cmd = request.args.get("c")
`)},
		{"helper returns its argument", py(`
def ident(v):
    return v
def h():
    os.system(ident(request.args.get("c")))  # want:python.cmdi.shell
    os.system(ident("ls"))
`)},
		{"helper that ignores its argument", py(`
def const(v):
    return "ls"
def h():
    os.system(const(request.args.get("c")))
`)},
		{"sink inside a helper reported there", py(`
def run(cmd):
    os.system(cmd)  # want:python.cmdi.shell
def h():
    run(request.args.get("c"))
`)},
		{"helper with sink called only with constants", py(`
def run(cmd):
    os.system(cmd)
def h():
    run("ls")
`)},
		{"list element", py(`
def h():
    xs = []
    xs.append(request.args.get("c"))
    os.system(xs[0])  # want:python.cmdi.shell
`)},
		{"clean element of a list with a tainted one", py(`
def h():
    xs = ["ls", request.args.get("c")]
    os.system(xs[0])
`)},
		{"dict key", py(`
def h():
    d = {"safe": "ls", "bad": request.args.get("c")}
    os.system(d["bad"])  # want:python.cmdi.shell
    os.system(d["safe"])
`)},
		{"object field", py(`
class Box:
    def __init__(self, v):
        self.v = v
def h():
    b = Box(request.args.get("c"))
    os.system(b.v)  # want:python.cmdi.shell
`)},
		{"object field holding a constant", py(`
class Box:
    def __init__(self, v):
        self.v = v
def h():
    request.args.get("c")
    b = Box("ls")
    os.system(b.v)
`)},
		{"sql through cursor", py(`
def h():
    conn = sqlite3.connect("db")
    cur = conn.cursor()
    cur.execute("select * from t where id = " + request.args.get("id"))  # want:python.sqli.string-query
`)},
		{"parameterized sql", py(`
def h():
    conn = sqlite3.connect("db")
    cur = conn.cursor()
    cur.execute("select * from t where id = ?", (request.args.get("id"),))
`)},
		{"taint through a closure", py(`
def h():
    c = request.args.get("c")
    def inner():
        os.system(c)  # want:python.cmdi.shell
    inner()
`)},
		{"aliasing of a list", py(`
def h():
    a = []
    b = a
    b.append(request.args.get("c"))
    os.system(a[0])  # want:python.cmdi.shell
`)},
		{"exception handler path", py(`
def h():
    cmd = "ls"
    try:
        cmd = request.args.get("c")
        int(cmd)
    except ValueError:
        os.system(cmd)  # want:python.cmdi.shell
`)},
		{"aborting check protects", py(`
from flask import abort
def h():
    c = request.args.get("c")
    if not (c in ["ls", "pwd"]):
        abort(400)
    os.system(c)
`)},
		{"allow-list membership guards its branch", py(`
def h():
    c = request.args.get("c")
    if c in ("ls", "pwd"):
        os.system(c)
    else:
        os.system(c)  # want:python.cmdi.shell
`)},
		{"aborting not-in check protects", py(`
from flask import abort
def h():
    c = request.args.get("c")
    if c not in ["ls", "pwd"]:
        abort(400)
    os.system(c)
`)},
		{"not-in check guards only its false branch", py(`
def h():
    c = request.args.get("c")
    if c not in ("ls", "pwd"):
        os.system(c)  # want:python.cmdi.shell
    else:
        os.system(c)
`)},
		{"keyword arguments bind by name", py(`
def run(safe, cmd):
    os.system(cmd)  # want:python.cmdi.shell
def h():
    run(cmd=request.args.get("c"), safe="x")
`)},
		{"keyword argument bound by name to a parameter without a sink", py(`
def run(safe, cmd):
    os.system(cmd)
def h():
    run(cmd="ls", safe=request.args.get("c"))
`)},
		{"positional then keyword, default left alone", py(`
def run(prefix, cmd="ls", *rest, **opts):
    os.system(prefix + cmd)  # want:python.cmdi.shell
    os.system(opts["x"])
def h():
    run("ping ", x="ls", cmd=request.args.get("c"))
`)},
		{"unknown keyword collected by **kwargs", py(`
def run(cmd="ls", **opts):
    os.system(opts["other"])  # want:python.cmdi.shell
    os.system(cmd)
def h():
    run(other=request.args.get("c"))
`)},
		{"function of a module imported from its package, called through a variable", []src{
			{"shop/tools.py", "import os\n\ndef run(cmd):\n    os.system(cmd)  # want:python.cmdi.shell\n\ndef safe(cmd):\n    os.system(\"ls\")\n"},
			{"site/app.py", pyHead + "from shop import tools\n\ndef h():\n    f = tools.run\n    f(request.args.get(\"c\"))\n    g = tools.safe\n    g(request.args.get(\"c\"))\n"},
		}},
		{"method call on an object of either class", py(`
class Echo:
    def run(self, c):
        os.system("echo")
class Shell:
    def run(self, c):
        os.system(c)  # want:python.cmdi.shell
def h(flag):
    b = Echo() if flag else Shell()
    b.run(request.args.get("c"))
`)},
		{"check that does not abort does not protect", py(`
import logging
def h():
    c = request.args.get("c")
    if not (c in ["ls", "pwd"]):
        logging.warning("bad")
    os.system(c)  # want:python.cmdi.shell
`)},
	})
}
