package dataflow_test

import "testing"

// Control flow per language: early returns, loops over tainted
// collections, switch dispatch and exception paths, each with its safe
// variant.
func TestFlowControl(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"go early return on a failed check", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	c := r.FormValue("c")
	if c != "ls" && c != "pwd" {
		http.Error(w, "no", 400)
		return
	}
	exec.Command("sh", "-c", c).Run()
}
`)},
		{"go check that only logs", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	c := r.FormValue("c")
	if c != "ls" {
		fmt.Println("unexpected")
	}
	exec.Command("sh", "-c", c).Run() // want:go.cmdi.exec
}
`)},
		{"go range over request values", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	for _, c := range r.URL.Query()["c"] {
		exec.Command("sh", "-c", c).Run() // want:go.cmdi.exec
	}
}
`)},
		{"go range over constants", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	for _, c := range []string{"ls", "pwd"} {
		exec.Command("sh", "-c", c).Run()
	}
}
`)},
		{"go switch assigning per case", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	c := "ls"
	switch r.FormValue("mode") {
	case "raw":
		c = r.FormValue("c")
	case "list":
		c = "ls -l"
	}
	exec.Command("sh", "-c", c).Run() // want:go.cmdi.exec
}
`)},
		{"javascript early return with an allow-list", js(`
const allowed = ["ls", "pwd"];
app.get("/a", (req, res) => {
  const c = req.query.c;
  if (!allowed.includes(c)) {
    return res.status(400).end();
  }
  cp.exec(c);
});
`)},
		{"javascript taint assigned in catch", js(`
app.get("/a", (req, res) => {
  let c = "ls";
  try {
    JSON.parse(req.query.j);
  } catch (e) {
    c = req.query.c;
  }
  cp.exec(c); // want:js.cmdi.exec
});
`)},
		{"javascript while loop", js(`
app.get("/a", (req, res) => {
  let c = "ls";
  let i = 0;
  while (i < 3) {
    if (i === 2) { c = req.query.c; }
    i++;
  }
  cp.exec(c); // want:js.cmdi.exec
});
`)},
		{"php early exit", php(`
$c = $_GET['c'];
if (!in_array($c, ["ls", "pwd"], true)) {
  exit(1);
}
system($c);
`)},
		{"php check without exit", php(`
$c = $_GET['c'];
if (!in_array($c, ["ls", "pwd"], true)) {
  error_log("unexpected");
}
system($c); // want:php.cmdi.shell
`)},
		{"php switch", php(`
switch ($_GET['m']) {
  case 'raw': $c = $_GET['c']; break;
  default: $c = 'ls';
}
system($c); // want:php.cmdi.shell
`)},
		{"ruby unless guard", rails(`  def run
    c = params[:c]
    return head(:bad_request) unless %w[ls pwd].include?(c)
    system(c)
  end
`)},
		{"ruby case dispatch", rails(`  def run
    c = case params[:m]
        when "raw" then params[:c]
        else "ls"
        end
    system(c) # want:ruby.cmdi.shell
  end
`)},
		{"ruby rescue path", rails(`  def run
    c = "ls"
    begin
      Integer(params[:n])
    rescue ArgumentError
      c = params[:c]
    end
    system(c) # want:ruby.cmdi.shell
  end
`)},
	})
}
