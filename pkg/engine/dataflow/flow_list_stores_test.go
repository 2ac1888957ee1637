package dataflow_test

import "testing"

// Stores into list elements: inserts shift the later elements, an insert
// or store past the end or at an unknown index taints every element, a
// store into the one list a name may hold replaces the element, a store
// into one of several possible lists only adds to it.
func TestFlowListElementStores(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"python insert at the front shifts the constant along", py(`
def h():
    xs = ["ls", "-l"]
    xs.insert(0, request.args.get("c"))
    os.system(xs[1])
    os.system(xs[0])  # want:python.cmdi.shell
`)},
		{"python insert past the end taints every element", py(`
def h():
    xs = ["ls"]
    xs.insert(5, request.args.get("c"))
    os.system(xs[0])  # want:python.cmdi.shell
`)},
		{"python store at a constant index replaces the element", py(`
def h():
    xs = ["ls", request.args.get("c")]
    xs[1] = "pwd"
    os.system(xs[1])
    os.system(xs[0])
`)},
		{"python store into one of two lists may reach either", py(`
def h(cond):
    xs = ["ls"]
    ys = ["pwd"]
    zs = xs if cond else ys
    zs[0] = request.args.get("c")
    os.system(ys[0])  # want:python.cmdi.shell
`)},
		{"python store at an unknown index taints every element", py(`
def h():
    xs = ["ls", "pwd"]
    xs[int(request.args.get("i"))] = request.args.get("c")
    os.system(xs[0])  # want:python.cmdi.shell
`)},
		{"js store past the end taints every element", js(`
app.get("/a", (req, res) => {
  const parts = ["ls"];
  parts[3] = req.query.p;
  cp.exec(parts[0]); // want:js.cmdi.exec
});
`)},
	})
}
