package dataflow_test

import "testing"

// Loops whose state keeps changing from one iteration to the next: the
// analysis widens the loop state (constants dropped, lists collapsed) so
// that it converges, and must still carry taint that needs many
// iterations to arrive.
func TestFlowLoopWidening(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"go taint shifted through seven variables by a loop", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	a, b, c, d, e, f, g := "", "", "", "", "", "", ""
	for i := 0; i < 10; i++ {
		a, b, c, d, e, f, g = b, c, d, e, f, g, r.FormValue("c")
	}
	exec.Command("sh", "-c", a).Run() // want:go.cmdi.exec
}
`)},
		{"go constants shifted through seven variables by a loop", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	a, b, c, d, e, f, g := "", "", "", "", "", "", ""
	for i := 0; i < 10; i++ {
		a, b, c, d, e, f, g = b, c, d, e, f, g, "ls"
	}
	exec.Command("sh", "-c", a).Run()
}
`)},
		{"go list that outlives a long loop keeps its elements", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	args := []string{"-c", "ls"}
	a, b, c, d, e, f, g := "", "", "", "", "", "", ""
	for i := 0; i < 10; i++ {
		a, b, c, d, e, f, g = b, c, d, e, f, g, r.FormValue("c")
	}
	exec.Command("sh", args[0], args[1]).Run()
	args[1] = a
	exec.Command("sh", args[0], args[1]).Run() // want:go.cmdi.exec
}
`)},
		{"go constant that grows every iteration, then used alone and tainted", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	c := "ls"
	for i := 0; i < len(r.URL.Path); i++ {
		c = c + " -l"
	}
	exec.Command("sh", "-c", c).Run()
	exec.Command("sh", "-c", c+r.FormValue("x")).Run() // want:go.cmdi.exec
}
`)},
		{"js list grown in a loop with request values", js(`
app.get("/a", (req, res) => {
  const parts = ["ls"];
  for (let i = 0; i < 20; i++) { parts.push(req.query.p); }
  cp.exec(parts.join(" ")); // want:js.cmdi.exec
});
`)},
		{"js list grown in a loop with constants", js(`
app.get("/a", (req, res) => {
  const parts = ["ls"];
  for (let i = 0; i < 20; i++) { parts.push("-l"); }
  cp.exec(parts.join(" "));
});
`)},
	})
}
