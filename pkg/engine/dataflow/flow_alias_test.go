package dataflow_test

import "testing"

// Two names for one object see each other's writes; two objects stay
// apart. Each language has the aliased write (reported) and the write to a
// distinct object (safe).
func TestFlowAliasing(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"java alias sees the field write", java(`
  static class Box { String v = "ls"; }
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    Box a = new Box();
    Box b = a;
    b.v = req.getParameter("c");
    Runtime.getRuntime().exec(a.v); // want:java.cmdi.exec
  }`)},
		{"java distinct objects stay apart", java(`
  static class Box { String v = "ls"; }
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    Box a = new Box();
    Box b = new Box();
    b.v = req.getParameter("c");
    Runtime.getRuntime().exec(a.v);
  }`)},
		{"java helper writes into its argument", java(`
  static class Box { String v = "ls"; }
  static void fill(Box x, String s) { x.v = s; }
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    Box a = new Box();
    fill(a, req.getParameter("c"));
    Runtime.getRuntime().exec(a.v); // want:java.cmdi.exec
  }`)},
		{"java helper writes a constant into its argument", java(`
  static class Box { String v; }
  static void fill(Box x, String s) { x.v = "ls"; }
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    Box a = new Box();
    fill(a, req.getParameter("c"));
    Runtime.getRuntime().exec(a.v);
  }`)},
		{"javascript alias", js(`
app.get("/a", (req, res) => {
  const a = { v: "ls" };
  const b = a;
  b.v = req.query.c;
  cp.exec(a.v); // want:js.cmdi.exec
});
`)},
		{"javascript distinct objects", js(`
app.get("/a", (req, res) => {
  const a = { v: "ls" };
  const b = { v: "ls" };
  b.v = req.query.c;
  cp.exec(a.v);
});
`)},
		{"go pointer alias", golang(`
type box struct{ v string }
func h(w http.ResponseWriter, r *http.Request) {
	a := &box{v: "ls"}
	b := a
	b.v = r.FormValue("c")
	exec.Command("sh", "-c", a.v).Run() // want:go.cmdi.exec
}
`)},
		{"go distinct values", golang(`
type box struct{ v string }
func h(w http.ResponseWriter, r *http.Request) {
	a := &box{v: "ls"}
	b := &box{v: "ls"}
	b.v = r.FormValue("c")
	exec.Command("sh", "-c", a.v).Run()
}
`)},
		{"go helper fills a struct through a pointer", golang(`
type box struct{ v string }
func fill(b *box, r *http.Request) { b.v = r.FormValue("c") }
func h(w http.ResponseWriter, r *http.Request) {
	var b box
	fill(&b, r)
	exec.Command("sh", "-c", b.v).Run() // want:go.cmdi.exec
}
`)},
		{"php object alias", php(`
class Box { public $v = "ls"; }
$a = new Box();
$b = $a;
$b->v = $_GET['c'];
system($a->v); // want:php.cmdi.shell
`)},
		{"ruby alias", rails(`  def run
    a = { v: "ls" }
    b = a
    b[:v] = params[:c]
    system(a[:v]) # want:ruby.cmdi.shell
  end
`)},
		{"python dict alias through a call", py(`
def put(d, v):
    d["cmd"] = v
def h():
    d = {"cmd": "ls"}
    put(d, request.args.get("c"))
    os.system(d["cmd"])  # want:python.cmdi.shell
`)},
	})
}
