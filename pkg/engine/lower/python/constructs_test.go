package python_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/python"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// Each case lowers a small module and checks lines (or runs of lines) of
// its IR dump.
func TestLowerConstructs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
		want      []string
	}{
		{"integer literals", `
a = 0x1F
b = 0o17
c = 1_000
d = 017
e = 10L
g = 99999999999999999999
`, []string{"a:int = 31", "b:int = 15", "c:int = 1000", "d:int = 15", "e:int = 10", "g:float = 1e+20"}},
		{"string literals", `
h = "a\tb\x41\u0042"
i = r"raw\n"
j = b"by\x41"
k = "con" "cat"
`, []string{`h:str = "a\tbAB"`, `i:str = "raw\\n"`, `j:str = "byA"`, `"concat"`}},
		{"match on literals, alternatives and structures", `
def f(v):
    match v:
        case -1:
            return "neg"
        case -2.5:
            return "nf"
        case "s" | "t":
            return "st"
        case [x, y]:
            return x
        case {"k": w}:
            return w
        case Point(x=px):
            return px
        case _:
            return "other"
`, []string{"= v == -1\n", "= v == -2.5\n", `= v == "s"`, `= v == "t"`, "= v[0]\n    x = ", "= v[1]\n    y = ",
			`= v["k"]` + "\n    w = ", "= v.x\n    px = ", `return "other"`}},
		{"module functions referenced before their definition", `
handlers = [later]
def later():
    return 1
`, []string{"= func m.later\n", "global m.handlers = "}},
	}
	for _, tc := range cases {
		dump := ir.Dump(lowertest.Lower(t, syntax.Python, python.Lower, "m.py", []byte(tc.src)))
		for _, w := range tc.want {
			require.Contains(t, dump, w, "%s:\n%s", tc.name, dump)
		}
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	f, err := python.Parse(context.Background(), "pkg/mod.py", []byte("import os\ndef f(x):\n    os.system(x)\n"))
	require.NoError(t, err)
	require.NoError(t, ir.ValidateFile(f))
	require.Equal(t, "python", f.Lang)
	require.Equal(t, "pkg/mod.py", f.Path)
	require.Equal(t, "pkg.mod", f.Package)
	dump := ir.Dump(f)
	require.Contains(t, dump, "func pkg.mod.f(x)")
	require.Contains(t, dump, "call.static os#system(x)")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := python.Parse(ctx, "x.py", []byte("x = 1\n")); err != nil {
		require.ErrorContains(t, err, "parse x.py")
	}
}
