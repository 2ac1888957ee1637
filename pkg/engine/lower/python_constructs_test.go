package lower_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/python"
)

// Each case lowers a small module and checks lines (or runs of lines) of
// its IR dump.
func TestPythonConstructs(t *testing.T) {
	t.Parallel()
	cases := []dumpCase{
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
	pythonFE.run(t, "m.py", cases)
}

func TestPythonParse(t *testing.T) {
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

// Imports, class members, comprehensions, context managers, loops with
// else, try/except/else/finally and expression forms, each checked in the
// lowered function it belongs to.
func TestPythonStatementsAndExpressions(t *testing.T) {
	t.Parallel()
	src := `import os.path as osp
from ..pkg import thing as th
from typing import *
class Svc(Base, metaclass=Meta):
    limit: int = 5
    @staticmethod
    def make(x): return x
    @classmethod
    def build(cls, y): return cls(y)
    async def fetch(self, u):
        async with session.get(u) as r:
            return await r.text()
def gen(xs):
    ys = [x * 2 for x in xs if x]
    d = {k: v for k, v in pairs}
    a, *b = xs
    with open(p) as f:
        data = f.read()
    while True:
        if stop(): break
    else:
        never()
    for i in xs:
        continue
    else:
        done()
    try:
        risky()
    except (ValueError, KeyError) as e:
        handle(e)
    else:
        ok()
    finally:
        close()
    assert xs, "msg"
    del d["k"]
    c = 1 < n < 3
    w = (z := 5)
    return f"{x!r:>10}"
`
	pythonFE.requireDump(t, "c.py", src,
		"import osp = os.path\n", "import th = pkg.thing\n", "import * = typing\n",
		// keyword arguments of a class statement are not superclasses
		"class c.Svc : Base\n  field static limit int",
		"func static c.Svc.make(x) @staticmethod", "func c.Svc.build(y) this=cls @classmethod",
		// cls(...) inside a classmethod constructs the class
		":c.Svc = call.new c.Svc#<init>(y)",
		// async with enters the context manager, await is the value
		"= call.method $t1.get(u)\n    $t3 = call.method $t2.__enter__()\n    r = $t3\n    $t4 = call.method r.text()\n    return $t4",
		// comprehensions build their collection in a loop, with their filter
		"$t1:list = list list []", "= x * 2\n    $t1[_] = $t4", "$t5[k] = v",
		// starred assignment
		"= xs[0]\n    a = ", "b:list = ",
		// with binds the result of __enter__
		"call.func open($t", "f = $t", "call.method f.read()",
		// loops with else
		"call.func never()", "call.func done()",
		// try: the body is covered by the handler, else and finally follow
		"handlers [", "catch ValueError|KeyError\n    e:ValueError = ", "call.func handle(e)", "call.func ok()", "call.func close()",
		// assert throws its message, del calls __delitem__
		`throw "msg" []`, `call.method d.__delitem__("k")`,
		// chained comparison (n is a global here) and assignment expression
		"= 1 < $t", " < 3\n", "z:int = 5\n    w:int = 5",
		// f-string conversions and format specs; x of the comprehension is not
		// visible after it, so this x is a global
		"call.func repr($t", `call.func format($t`, `">10")`,
	)
}
