package dataflow_test

import "testing"

const goHead = `package app

import (
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

var _, _, _, _, _, _ = sql.Open, fmt.Sprint, os.Open, filepath.Base, strconv.Atoi, strings.ToUpper
`

func golang(code string) []src { return one("app/h.go", goHead+code) }

func TestFlowGo(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"form value to a command", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	c := r.FormValue("c")
	exec.Command("sh", "-c", c).Run() // want:go.cmdi.exec
}
`)},
		{"later result of a helper", golang(`
func parse(r *http.Request) (string, string) {
	return "ls", r.FormValue("c")
}
func h(w http.ResponseWriter, r *http.Request) {
	good, bad := parse(r)
	exec.Command("sh", "-c", good).Run()
	exec.Command("sh", "-c", bad).Run() // want:go.cmdi.exec
}
`)},
		{"later result in terms of a parameter, and named results", golang(`
func split(a, b string) (first, second string) {
	first, second = a, b
	return
}
func pick(a string, b string) (string, string, error) {
	return a, b, nil
}
func h(w http.ResponseWriter, r *http.Request) {
	x, y := split("ls", r.FormValue("c"))
	exec.Command("sh", "-c", x).Run()
	exec.Command("sh", "-c", y).Run() // want:go.cmdi.exec
	p, q, err := pick(r.FormValue("c"), "ls")
	exec.Command("sh", "-c", p).Run() // want:go.cmdi.exec
	exec.Command("sh", "-c", q).Run()
	_ = err
}
`)},
		{"constant command", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	_ = r.FormValue("c")
	exec.Command("sh", "-c", "ls").Run()
}
`)},
		{"query into sql with Sprintf", golang(`
func h(db *sql.DB, r *http.Request) {
	q := fmt.Sprintf("select * from t where id = '%s'", r.URL.Query().Get("id"))
	db.Query(q) // want:go.sqli.string-query
}
`)},
		{"placeholder query", golang(`
func h(db *sql.DB, r *http.Request) {
	db.Query("select * from t where id = $1", r.URL.Query().Get("id"))
}
`)},
		{"Atoi sanitizes", golang(`
func h(db *sql.DB, r *http.Request) {
	n, _ := strconv.Atoi(r.FormValue("n"))
	db.Query("select * from t limit " + strconv.Itoa(n))
}
`)},
		{"reflected write", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	w.Write([]byte("<p>" + r.FormValue("name"))) // want:go.xss.response-write
}
`)},
		{"reflected Fprintf", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "<p>%s", r.FormValue("name")) // want:go.xss.response-write
}
`)},
		{"Fprintf to a file is not a response", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	f, _ := os.Create("/tmp/log")
	fmt.Fprintf(f, "%s", r.FormValue("name"))
}
`)},
		{"path joined from input", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	os.Open(filepath.Join("/data", r.FormValue("f"))) // want:go.path.file-access
}
`)},
		{"struct field", golang(`
type job struct{ cmd string }
func h(w http.ResponseWriter, r *http.Request) {
	j := job{cmd: r.FormValue("c")}
	exec.Command("sh", "-c", j.cmd).Run() // want:go.cmdi.exec
}
`)},
		{"struct field overwritten", golang(`
type job struct{ cmd string }
func h(w http.ResponseWriter, r *http.Request) {
	j := job{cmd: r.FormValue("c")}
	j.cmd = "ls"
	exec.Command("sh", "-c", j.cmd).Run()
}
`)},
		{"slice append", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	args := []string{"-c"}
	args = append(args, r.FormValue("c"))
	exec.Command(args[1]).Run() // want:go.cmdi.exec
	exec.Command(args[0]).Run()
}
`)},
		{"map value", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	m := map[string]string{"safe": "ls"}
	m["bad"] = r.FormValue("c")
	exec.Command("sh", "-c", m["bad"]).Run() // want:go.cmdi.exec
	exec.Command("sh", "-c", m["safe"]).Run()
}
`)},
		{"method on a receiver", golang(`
type runner struct{ shell string }
func (x *runner) run(c string) { exec.Command(x.shell, "-c", c).Run() } // want:go.cmdi.exec
func h(w http.ResponseWriter, r *http.Request) {
	x := &runner{shell: "sh"}
	x.run(r.FormValue("c"))
}
`)},
		{"closure", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	c := r.FormValue("c")
	run := func() { exec.Command("sh", "-c", c).Run() } // want:go.cmdi.exec
	run()
}
`)},
		{"switch selects a constant", golang(`
func h(w http.ResponseWriter, r *http.Request) {
	var c string
	switch r.FormValue("op") {
	case "list":
		c = "ls"
	default:
		c = "pwd"
	}
	exec.Command("sh", "-c", c).Run()
}
`)},
		{"helper in another package", []src{
			{"app/run/run.go", `package run

import "os/exec"

func Shell(c string) error {
	return exec.Command("sh", "-c", c).Run() // want:go.cmdi.exec
}
`},
			{"app/h.go", `package app

import (
	"net/http"

	"example.com/app/run"
)

func h(w http.ResponseWriter, r *http.Request) {
	run.Shell(r.FormValue("c"))
	run.Shell("ls")
}
`}}},
	})
}
