package dataflow_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/dataflow"
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/python"
	"github.com/vulnscan/vulnscan/pkg/engine/model"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// libModels describes a made-up Python module "lib", so that each feature
// of the model language is exercised alone, independent of the embedded
// library models.
func libModels() *model.Set {
	return &model.Set{
		Language: "python",
		Types:    map[string][]string{"lib.Special": {"lib.Base"}},
		Returns:  map[string]string{"lib#session": "lib.Session", "lib#special": "lib.Special", "lib#base": "lib.Base"},
		Aliases:  map[string]string{},
		Constants: map[string]string{
			"lib.WEAK": "md5",
		},
		Sources: []model.Source{
			{Kind: "remote", Targets: []string{"lib#src"}},
			{Kind: "weakrand", Targets: []string{"lib#rand"}, Classes: []string{"weakrand"}},
			{Kind: "env", Globals: []string{"lib.ENV"}},
			{Kind: "remote", ParamNames: []string{"untrusted"}},
			{Kind: "remote", Targets: []string{"lib#fill"}, Taints: []string{"arg0"}},
			{Kind: "remote", Targets: []string{"lib#xss_only"}, Classes: []string{"xss"}},
		},
		Sanitizers: []model.Sanitizer{
			{Targets: []string{"lib#esc_html"}, Classes: []string{"xss"}},
			{Targets: []string{"lib#esc_all"}},
			{Targets: []string{"lib#is_safe"}, Guard: true, Arg: 0},
		},
		Propagators: []model.Propagator{
			{Targets: []string{"lib#hash"}, Clean: true},
			{Targets: []string{"lib#copy_into"}, From: []string{"arg0"}, To: []string{"arg1"}},
			{Targets: []string{"lib#first_only"}, From: []string{"arg0"}, To: []string{"ret"}},
		},
		Containers: []model.Container{
			{Targets: []string{"lib#new_list"}, Op: "new", Kind: "list"},
			{Targets: []string{"lib#new_map"}, Op: "new", Kind: "map"},
			{Targets: []string{"*#push"}, Op: "append"},
			{Targets: []string{"*#ins"}, Op: "insert"},
			{Targets: []string{"*#at"}, Op: "get_index"},
			{Targets: []string{"*#set_at"}, Op: "set_index"},
			{Targets: []string{"*#take"}, Op: "remove_index"},
			{Targets: []string{"*#put"}, Op: "put"},
			{Targets: []string{"*#lookup"}, Op: "get_key"},
			{Targets: []string{"*#drop"}, Op: "remove_key"},
			{Targets: []string{"*#some"}, Op: "any_element"},
			{Targets: []string{"*#view"}, Op: "alias"},
			{Targets: []string{"*#extend_all"}, Op: "add_all"},
			{Targets: []string{"*#wipe"}, Op: "clear"},
		},
		Setters: []model.Setter{
			{Targets: []string{"*#set_secure"}, Field: "secure", Arg: 0},
			{Targets: []string{"*#harden"}, Field: "secure", Value: "true"},
		},
		Evaluators: []model.Evaluator{
			{Targets: []string{"lib#upper"}, Fn: "to_upper"},
			{Targets: []string{"lib#lower"}, Fn: "to_lower"},
			{Targets: []string{"lib#concat"}, Fn: "concat"},
			{Targets: []string{"lib#conf"}, Fn: "property"},
			{Targets: []string{"lib#sub"}, Fn: "substring"},
			{Targets: []string{"lib#trim"}, Fn: "trim"},
			{Targets: []string{"lib#repl"}, Fn: "replace"},
			{Targets: []string{"lib#char_at"}, Fn: "char_at"},
			{Targets: []string{"lib#split_get"}, Fn: "split_get"},
		},
		EntryPoints: []model.EntryPoint{
			{Name: "LibWeb", Annotations: []string{"lib.route"}, Params: []string{"1"}},
			{Name: "LibCallbacks", Registrations: []string{"lib#on"}, Callback: -1},
		},
		NoReturn: []string{"lib#die"},
	}
}

func libRules(t *testing.T) []*model.FlowRule {
	t.Helper()
	rules := []*model.FlowRule{
		{ID: "sql", Class: "sqli", Sinks: []model.Sink{{Targets: []string{"lib#query"}, Args: []int{0}}}},
		{ID: "html", Class: "xss", Sinks: []model.Sink{{Targets: []string{"lib#render"}}}},
		{ID: "cmd", Class: "cmdi", Sinks: []model.Sink{{Targets: []string{"lib#spawn"}, Kwargs: []string{"cmd"}}}},
		{ID: "recv", Class: "code", Sinks: []model.Sink{{Targets: []string{"?#run_self"}, Recv: true}}},
		{ID: "fetch", Class: "ssrf", Sinks: []model.Sink{
			{Targets: []string{"lib#fetch"}, Args: []int{0}, When: &model.ArgCond{Arg: 1, Matches: "^remote$"}},
			{Targets: []string{"lib#fetch2"}, Args: []int{0}, Unless: &model.ArgCond{Arg: 1, Matches: "^local$"}},
		}},
		{ID: "token", Class: "weakrand", Sinks: []model.Sink{{Targets: []string{"lib#token"}}}},
		{ID: "digest", Const: &model.ConstCall{Targets: []string{"lib#digest"}, Arg: 0, Matches: "(?i)^md5$"}},
		{ID: "cookie", Class: "cookie", Sinks: []model.Sink{{Targets: []string{"lib#add_cookie"}, Args: []int{0},
			UnlessField: &model.FieldCond{Name: "secure", Equals: "true"}}}},
		{ID: "session", Class: "trustbound", Sinks: []model.Sink{{Stores: []string{"lib.Session"}}}},
		{ID: "typed", Class: "path", Sinks: []model.Sink{{Targets: []string{"lib.Base#open"}, Args: []int{0}}}},
	}
	for _, r := range rules {
		require.NoError(t, r.Compile())
	}
	return rules
}

// libFlow lowers one Python file importing lib and analyses it with the
// lib models and rules, returning "rule file:line" strings.
func libFlow(t *testing.T, code string, props map[string]string) ([]string, dataflow.Result) {
	t.Helper()
	f := lowertest.Lower(t, syntax.Python, python.Lower, "m.py", []byte(code))
	cfg := dataflow.Config{
		Models:     map[string]*model.Set{"python": libModels()},
		Rules:      map[string][]*model.FlowRule{"python": libRules(t)},
		Properties: props,
	}
	res, err := dataflow.Analyze(context.Background(), []*ir.File{f}, cfg)
	require.NoError(t, err)
	out := []string{}
	for _, fd := range res.Findings {
		out = append(out, fmt.Sprintf("%s %s:%d", fd.Rule.ID, fd.File.Path, fd.Pos.Line))
	}
	sort.Strings(out)
	return out, res
}

func runLibCases(t *testing.T, cases []struct{ name, code string }) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code := "import lib\n" + tc.code
			want := expected([]src{{"m.py", code}})
			got, _ := libFlow(t, code, map[string]string{"alg.weak": "MD5", "alg.strong": "SHA-256"})
			if want == nil {
				want = []string{}
			}
			require.Equal(t, want, got)
		})
	}
}

func TestModelSources(t *testing.T) {
	t.Parallel()
	runLibCases(t, []struct{ name, code string }{
		{"call result", `
def f():
    lib.query(lib.src())  # want:sql
`},
		{"unrelated call is no source", `
def f():
    lib.query(lib.other())
`},
		{"tainted global", `
def f():
    lib.query(lib.ENV)  # want:sql
`},
		{"parameter by name", `
def f(untrusted, trusted):
    lib.query(untrusted)  # want:sql
    lib.query(trusted)
`},
		{"source tainting its argument", `
def f():
    buf = []
    lib.fill(buf)
    lib.query(buf)  # want:sql
`},
		{"source restricted to one class", `
def f():
    v = lib.xss_only()
    lib.query(v)
    lib.render(v)  # want:html
`},
		{"weak random only reaches weakrand sinks", `
def f():
    r = lib.rand()
    lib.token(r)  # want:token
    lib.query(r)
`},
		{"remote data is not weak randomness", `
def f():
    lib.token(lib.src())
`},
	})
}

func TestModelSanitizersAndPropagators(t *testing.T) {
	t.Parallel()
	runLibCases(t, []struct{ name, code string }{
		{"class-specific sanitizer keeps other classes", `
def f():
    v = lib.esc_html(lib.src())
    lib.render(v)
    lib.query(v)  # want:sql
`},
		{"sanitizer of every class", `
def f():
    v = lib.esc_all(lib.src())
    lib.render(v)
    lib.query(v)
`},
		{"sanitized on one path only", `
def f(c):
    v = lib.src()
    if c:
        v = lib.esc_all(v)
    lib.query(v)  # want:sql
`},
		{"sanitized on every path", `
def f(c):
    v = lib.src()
    if c:
        v = lib.esc_all(v)
    else:
        v = lib.esc_all(v + "x")
    lib.query(v)
`},
		{"guard cleans its branch", `
def f():
    v = lib.src()
    if lib.is_safe(v):
        lib.query(v)
    else:
        lib.query(v)  # want:sql
`},
		{"negated guard with a no-return call", `
def f():
    v = lib.src()
    if not lib.is_safe(v):
        lib.die()
    lib.query(v)
`},
		{"guard whose failure does not stop", `
def f():
    v = lib.src()
    if not lib.is_safe(v):
        print("bad")
    lib.query(v)  # want:sql
`},
		{"clean propagator", `
def f():
    lib.query(lib.hash(lib.src()))
`},
		{"unmodelled call propagates", `
def f():
    lib.query(lib.unknown(lib.src()))  # want:sql
`},
		{"propagator into an argument", `
def f():
    out = []
    lib.copy_into(lib.src(), out)
    lib.query(out)  # want:sql
`},
		{"propagator from one argument only", `
def f():
    lib.query(lib.first_only("x", lib.src()))
    lib.query(lib.first_only(lib.src(), "x"))  # want:sql
`},
	})
}

func TestModelContainers(t *testing.T) {
	t.Parallel()
	runLibCases(t, []struct{ name, code string }{
		{"append then index", `
def f():
    xs = lib.new_list()
    xs.push("a")
    xs.push(lib.src())
    lib.query(xs.at(1))  # want:sql
    lib.query(xs.at(0))
`},
		{"insert shifts", `
def f():
    xs = lib.new_list()
    xs.push("a")
    xs.ins(0, lib.src())
    lib.query(xs.at(0))  # want:sql
    lib.query(xs.at(1))
`},
		{"set by index overwrites", `
def f():
    xs = lib.new_list()
    xs.push(lib.src())
    xs.set_at(0, "clean")
    lib.query(xs.at(0))
`},
		{"remove by index", `
def f():
    xs = lib.new_list()
    xs.push(lib.src())
    xs.push("b")
    v = xs.take(0)
    lib.query(v)  # want:sql
    lib.query(xs.at(0))
`},
		{"map put and get", `
def f():
    m = lib.new_map()
    m.put("k", lib.src())
    m.put("j", "safe")
    lib.query(m.lookup("k"))  # want:sql
    lib.query(m.lookup("j"))
`},
		{"map get default when absent", `
def f():
    m = lib.new_map()
    m.put("j", "safe")
    lib.query(m.lookup("missing", lib.src()))  # want:sql
    lib.query(m.lookup("j", lib.src()))
`},
		{"map remove key", `
def f():
    m = lib.new_map()
    m.put("k", lib.src())
    v = m.drop("k")
    lib.query(v)  # want:sql
    lib.query(m.lookup("k"))
`},
		{"any element", `
def f():
    xs = lib.new_list()
    xs.push("a")
    xs.push(lib.src())
    lib.query(xs.some())  # want:sql
`},
		{"alias shares the container", `
def f():
    xs = lib.new_list()
    v = xs.view()
    v.push(lib.src())
    lib.query(xs.some())  # want:sql
`},
		{"add all", `
def f():
    a = lib.new_list()
    a.push(lib.src())
    b = lib.new_list()
    b.extend_all(a)
    lib.query(b.some())  # want:sql
`},
		{"clear empties", `
def f():
    xs = lib.new_list()
    xs.push(lib.src())
    xs.wipe()
    xs.push("ok")
    lib.query(xs.some())
`},
	})
}

func TestModelSinkShapes(t *testing.T) {
	t.Parallel()
	runLibCases(t, []struct{ name, code string }{
		{"only the listed argument", `
def f():
    lib.query("select", lib.src())
    lib.query(lib.src(), "x")  # want:sql
`},
		{"keyword argument", `
def f():
    lib.spawn(lib.src(), cmd="ls")
    lib.spawn("ls", cmd=lib.src())  # want:cmd
`},
		{"receiver", `
def f():
    v = lib.src()
    v.run_self()  # want:recv
    "x".run_self()
`},
		{"when the other argument matches", `
def f():
    lib.fetch(lib.src(), "remote")  # want:fetch
    lib.fetch(lib.src(), "local")
`},
		{"unless the other argument matches", `
def f():
    lib.fetch2(lib.src(), "remote")  # want:fetch
    lib.fetch2(lib.src(), "local")
`},
		{"store into a session", `
def f():
    s = lib.session()
    s["user"] = lib.src()  # want:session
    s["lang"] = "en"
`},
		{"typed receiver through the subtype table", `
def f():
    lib.special().open(lib.src())  # want:typed
    lib.base().open(lib.src())  # want:typed
    lib.other().open(lib.src())
`},
	})
}

func TestModelConstantAndPropertyRules(t *testing.T) {
	t.Parallel()
	runLibCases(t, []struct{ name, code string }{
		{"literal", `
def f():
    lib.digest("MD5")  # want:digest
    lib.digest("sha256")
`},
		{"library constant", `
def f():
    lib.digest(lib.WEAK)  # want:digest
`},
		{"evaluated to upper and lower", `
def f():
    lib.digest(lib.upper("md5"))  # want:digest
    lib.digest(lib.lower("MD5"))  # want:digest
    lib.digest(lib.upper("sha1"))
`},
		{"concatenated pieces", `
def f():
    a = "m"
    lib.digest(a + "d5")  # want:digest
    lib.digest(lib.concat("m", "d5"))  # want:digest
`},
		{"substring, trim, replace, char_at", `
def f():
    lib.digest(lib.sub("xmd5", 1))  # want:digest
    lib.digest(lib.trim("  md5 "))  # want:digest
    lib.digest(lib.repl("sha5", "sha", "md"))  # want:digest
    lib.digest(lib.char_at("m", 0) + "d5")  # want:digest
`},
		{"split and get", `
def f():
    lib.digest(lib.split_get("sha1,md5", ",", 1))  # want:digest
`},
		{"repository configuration", `
def f():
    lib.digest(lib.conf("alg.weak"))  # want:digest
    lib.digest(lib.conf("alg.strong"))
    lib.digest(lib.conf("alg.missing"))
`},
		{"unknown value is not reported", `
def f(x):
    lib.digest(x)
`},
		{"cookie without the secure flag", `
class Cookie:
    pass
def f():
    c = Cookie()
    lib.add_cookie(c)  # want:cookie
`},
		{"cookie made secure by a setter", `
class Cookie:
    pass
def f():
    c = Cookie()
    c.set_secure(True)
    lib.add_cookie(c)
`},
		{"cookie made secure by a valueless setter", `
class Cookie:
    pass
def f():
    c = Cookie()
    c.harden()
    lib.add_cookie(c)
`},
		{"cookie set insecure explicitly", `
class Cookie:
    pass
def f():
    c = Cookie()
    c.set_secure(False)
    lib.add_cookie(c)  # want:cookie
`},
	})
}

func TestModelEntryPoints(t *testing.T) {
	t.Parallel()
	runLibCases(t, []struct{ name, code string }{
		{"annotated handler parameter selected by index", `
@lib.route("/x")
def view(a, b):
    lib.query(a)
    lib.query(b)  # want:sql
`},
		{"registered callback", `
def cb(req):
    lib.query(req)  # want:sql
lib.on("event", cb)
`},
		{"function neither annotated nor registered", `
def cb(req):
    lib.query(req)
`},
	})
}

func TestEntryPointAndSourceAreReported(t *testing.T) {
	t.Parallel()
	code := "import lib\n@lib.route('/x')\ndef view(a, b):\n    v = b\n    lib.query(v)\n"
	got, res := libFlow(t, code, nil)
	require.Equal(t, []string{"sql m.py:5"}, got)
	fd := res.Findings[0]
	require.Equal(t, "LibWeb", fd.Entry)
	require.Contains(t, fd.Source, "LibWeb")
	require.Equal(t, "flow", fd.Kind)
	require.True(t, fd.TypedSink, "a module function is a typed target")
	require.Equal(t, "m.view", fd.Func.QName)
	steps := fd.Steps
	require.NotEmpty(t, steps)
	require.Equal(t, int32(3), steps[0].Pos.Line, "the path starts at the parameter")
	require.Equal(t, int32(5), steps[len(steps)-1].Pos.Line, "and ends at the sink")
	for i := 1; i < len(steps); i++ {
		require.LessOrEqual(t, steps[i-1].Pos.Line, steps[i].Pos.Line)
	}
	require.GreaterOrEqual(t, len(steps), 2)
	require.Equal(t, steps[:len(steps)-1], steps[len(steps)-2].Steps(), "Steps walks the links from the first step")
	require.Contains(t, steps[len(steps)-1].What, "query")
	require.Positive(t, res.Stats.Functions)
}

func TestConstantFindingKinds(t *testing.T) {
	t.Parallel()
	code := "import lib\nclass Cookie:\n    pass\ndef f():\n    lib.digest('md5')\n    c = Cookie()\n    lib.add_cookie(c)\n"
	_, res := libFlow(t, code, nil)
	kinds := map[string]string{}
	for _, fd := range res.Findings {
		kinds[fd.Rule.ID] = fd.Kind
		require.Empty(t, fd.Steps, "%s has no path", fd.Rule.ID)
	}
	require.Equal(t, map[string]string{"digest": "const", "cookie": "property"}, kinds)
}
