package dataflow_test

import "testing"

// Sanitizers of the embedded models clear the classes they name and only
// those: each case has the raw flow, the sanitized flow, and (where the
// sanitizer is class-specific) the sanitized value reaching a sink of
// another class.
func TestFlowSanitizers(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"python html escape clears xss only", one("app.py", `from flask import request, make_response
from markupsafe import escape
import os
def h():
    name = request.args.get("n")
    make_response("<p>" + name)  # want:python.xss.response
    make_response("<p>" + escape(name))
    os.system("echo " + escape(name))  # want:python.cmdi.shell
`)},
		{"python normalized path checked under a base", one("app.py", `from flask import request
import os
BASE = "/srv/files"
def h():
    p = os.path.realpath(os.path.join(BASE, request.args.get("f")))
    if not p.startswith(BASE):
        return "no"
    open(p).read()
`)},
		{"python path opened without the check", one("app.py", `from flask import request
import os
BASE = "/srv/files"
def h():
    p = os.path.realpath(os.path.join(BASE, request.args.get("f")))
    open(p).read()  # want:python.path.file-access
`)},
		{"java spring html escape", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    String n = req.getParameter("n");
    resp.getWriter().println(org.springframework.web.util.HtmlUtils.htmlEscape(n));
    resp.getWriter().println(n); // want:java.xss.writer
  }`)},
		{"java file name keeps only the last segment", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    String f = req.getParameter("f");
    new FileInputStream("/srv/" + org.apache.commons.io.FilenameUtils.getName(f));
    new FileInputStream("/srv/" + f); // want:java.path.file-access
  }`)},
		{"java url encoding clears shell metacharacters but not sql", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws Exception {
    String c = java.net.URLEncoder.encode(req.getParameter("c"), "UTF-8");
    Runtime.getRuntime().exec("curl http://x/?q=" + c);
    Statement st = DriverManager.getConnection("jdbc:x").createStatement();
    st.execute("select * from t where q = '" + c + "'"); // want:java.sqli.string-query
  }`)},
		{"javascript escape-html", js(`
const escapeHtml = require("escape-html");
app.get("/a", (req, res) => {
  res.send("<p>" + escapeHtml(req.query.n));
  res.send("<p>" + req.query.n); // want:js.xss.response
});
`)},
		{"javascript number conversion", js(`
app.get("/a", (req, res) => {
  cp.exec("sleep " + Number(req.query.n));
  cp.exec("sleep " + req.query.n); // want:js.cmdi.exec
});
`)},
		{"go url query escape", one("app/h.go", `package app

import (
	"net/http"
	"net/url"
)

func h(w http.ResponseWriter, r *http.Request) {
	w.Write([]byte("<a href='/x?q=" + url.QueryEscape(r.FormValue("q")) + "'>"))
	w.Write([]byte("<a href='/x?q=" + r.FormValue("q") + "'>")) // want:go.xss.response-write
}
`)},
		{"php intval and htmlspecialchars", php(`
$n = $_GET['n'];
echo intval($n);
echo htmlspecialchars($n);
echo $n; // want:php.xss.echo
`)},
		{"ruby to_i", rails(`  def run
    system("sleep #{params[:n].to_i}")
    system("sleep #{params[:n]}") # want:ruby.cmdi.shell
  end
`)},
	})
}
