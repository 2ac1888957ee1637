package dataflow_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// A branch on a condition known at analysis time only flows to the side
// taken: each expression below guards a tainted sink, which must be
// reported exactly when the expression is true.
func TestConstantConditionsAreFolded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		expr string
		want bool
	}{
		{"True", true},
		{"False", false},
		{"not True", false},
		{"not False", true},
		{"1 + 2 == 3", true},
		{"1 + 2 == 4", false},
		{"7 - 10 < 0", true},
		{"6 * 7 == 42", true},
		{"6 * 7 != 42", false},
		{"9 / 3 == 3", true},
		{"10 % 4 == 2", true},
		{"10 % 4 == 3", false},
		{"2 ** 10 == 1024", true},
		{"-5 < 0", true},
		{"-(-5) < 0", false},
		{"~0 == -1", true},
		{"5 & 3 == 1", true},
		{"(5 | 2) == 7", true},
		{"(5 ^ 1) == 4", true},
		{"(1 << 4) == 16", true},
		{"(256 >> 4) == 16", true},
		{"3 >= 3", true},
		{"3 > 3", false},
		{"2 <= 1", false},
		{"1.5 * 2 == 3", true},
		{"0.1 > 1", false},
		{`"a" + "b" == "ab"`, true},
		{`"ab" == "ba"`, false},
		{`"abc" != "abc"`, false},
		{`"b" > "a"`, true},
		{"0", false},
		{"1", true},
		{`""`, false},
		{`"x"`, true},
		{"None", false},
		{"x == 1", true},
		{"x != 1", false},
		{"x * 2 == 2", true},
		{"x > 5 or x == 1", true},
		{"x > 5 and x == 1", false},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			t.Parallel()
			mark := ""
			if tc.want {
				mark = "  # want:sql"
			}
			code := fmt.Sprintf("import lib\ndef f():\n    x = 1\n    v = lib.src()\n    if %s:\n        lib.query(v)%s\n", tc.expr, mark)
			got, _ := libFlow(t, code, nil)
			want := expected([]src{{"m.py", code}})
			if want == nil {
				want = []string{}
			}
			require.Equal(t, want, got)
		})
	}
}

// An unknown condition keeps both sides.
func TestUnknownConditionsKeepBothSides(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{"p", "p == 1", "not p", "len(p) > 2", "p is None", "1 + p == 3", `p + "a" == "ba"`} {
		code := fmt.Sprintf("import lib\ndef f(p):\n    v = lib.src()\n    if %s:\n        lib.query(v)  # want:sql\n    else:\n        lib.query(v)  # want:sql\n", expr)
		got, _ := libFlow(t, code, nil)
		require.Equal(t, expected([]src{{"m.py", code}}), got, expr)
	}
}

// Conditions on values the analysis derives from constants through
// variables, loops and helpers.
func TestDerivedConstants(t *testing.T) {
	t.Parallel()
	runLibCases(t, []struct{ name, code string }{
		{"constant through variables", `
def f():
    a = 3
    b = a * 2
    v = lib.src()
    if b == 6:
        lib.query(v)  # want:sql
    if b == 7:
        lib.query(v)
`},
		{"helper returning different constants is unknown", `
def mode(p):
    if p:
        return "strict"
    return "loose"
def f(p):
    v = lib.src()
    if mode(p) == "strict":
        v = "safe"
    lib.query(v)  # want:sql
`},
		{"constant changed in a loop is unknown after it", `
def f(items):
    n = 0
    for i in items:
        n = n + 1
    v = lib.src()
    if n == 0:
        v = "safe"
    lib.query(v)  # want:sql
`},
		{"equality refines an unknown value", `
def f():
    v = lib.src()
    if v == "fixed":
        lib.query(v)
    else:
        lib.query(v)  # want:sql
`},
		{"inequality refines the other side", `
def f():
    v = lib.src()
    if v != "fixed":
        return
    lib.query(v)
`},
		{"membership in constants refines", `
def f():
    v = lib.src()
    if v in ["a", "b"]:
        lib.query(v)
`},
		{"membership in a tainted list does not", `
def f():
    v = lib.src()
    allowed = [lib.src()]
    if v in allowed:
        lib.query(v)  # want:sql
`},
	})
}

// Loops with heap objects converge and keep what their iterations store.
func TestLoopsWithObjectsConverge(t *testing.T) {
	t.Parallel()
	runLibCases(t, []struct{ name, code string }{
		{"list grown in a loop", `
def f(items):
    xs = lib.new_list()
    for i in items:
        xs.push(i)
        xs.push(lib.src())
    lib.query(xs.some())  # want:sql
`},
		{"list grown in a loop with constants only", `
def f():
    xs = lib.new_list()
    i = 0
    while i < 100:
        xs.push("c")
        i = i + 1
    lib.query(xs.some())
`},
		{"field set on a later iteration", `
class Box:
    pass
def f(items):
    b = Box()
    b.v = "safe"
    for i in items:
        lib.query(b.v)  # want:sql
        b.v = lib.src()
`},
		{"nested loops", `
def f(rows):
    acc = ""
    for r in rows:
        for c in r:
            acc = acc + c
        acc = acc + lib.src()
    lib.query(acc)  # want:sql
`},
		{"map written under a loop-dependent key", `
def f(keys):
    m = lib.new_map()
    m.put("safe", "x")
    for k in keys:
        m.put(k, lib.src())
    lib.query(m.lookup("safe"))  # want:sql
`},
	})
}
