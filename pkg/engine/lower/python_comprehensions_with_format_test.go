package lower_test

import "testing"

// Comprehensions, context managers, string formatting and starred
// unpacking, each checked in its lowered IR.
func TestPythonComprehensionsWithFormatting(t *testing.T) {
	t.Parallel()
	pythonFE.run(t, "a.py", []dumpCase{
		{"list, dict, set comprehensions and generator expressions", `
def comp(xs, d):
    a = [x * 2 for x in xs if x]
    b = {k: v for k, v in d.items()}
    c = {x for x in xs}
    g = (x for x in xs)
    return a, b, c, g
`, []string{
			// the filter guards the append
			"  b2:\n    $t3 = xs[_]\n    x = $t3\n    if x b4 b5\n", "  b4:\n    $t4 = x * 2\n    $t1[_] = $t4\n",
			"a:list = $t1\n",
			// dict comprehension unpacks the pair and stores by key
			"$t9 = $t8[0]\n    k = $t9\n    $t10 = $t8[1]\n    v = $t10\n    $t5[k] = v\n", "b:dict = $t5\n",
			"$t11:set = list set []\n", "c:set = $t11\n", "g:list = $t14\n",
		}},
		{"with statements enter every context manager", `
def ctx(p):
    with open(p) as f, lock:
        data = f.read()
    return data
`, []string{"$t1 = call.func open(p)\n    $t2 = call.method $t1.__enter__()\n    f = $t2\n    $t3 = global lock\n    $t4 = call.method $t3.__enter__()\n    $t5 = call.method f.read()\n    data = $t5\n"}},
		{"percent, format and f-string conversions", `
def fmt(n):
    a = "%s-%d" % (n, 1)
    b = "{}!".format(n)
    c = f"{n!r:>10}"
    return a + b + c
`, []string{
			`$t1:str = call.method "%s-%d".__mod__(n, 1)`, `$t2:str = call.method "{}!".format(n)`,
			"$t3:str = call.func repr(n)\n    $t4:str = call.func format($t3, \">10\")\n    $t5:str = \"\" + $t4\n    c:str = $t5\n",
		}},
		{"starred and nested unpacking", `
def unpack(t):
    a, *rest = t
    (b, c), d = t
    return a, rest, b, c, d
`, []string{
			"$t1 = t[0]\n    a = $t1\n    $t2 = t[_]\n    $t3:list = list list [$t2]\n    rest:list = $t3\n",
			"$t4 = t[0]\n    $t5 = $t4[0]\n    b = $t5\n    $t6 = $t4[1]\n    c = $t6\n    $t7 = t[1]\n    d = $t7\n",
		}},
	})
}

// Class attributes, typing aliases and many lambdas in one function.
func TestPythonClassAttributesTypingLambdas(t *testing.T) {
	t.Parallel()
	pythonFE.run(t, "a.py", []dumpCase{
		{"class attributes are static fields, typing aliases built-ins", `
from typing import List, Dict, Text
class K(List[str]):
    name: str
    count = 3
    label: Text = "x"
    "doc"

def ann(a: Dict[str, int], b: Text) -> List[str]:
    return [b]
`, []string{
			"class a.K : list\n  field static name str\n  field static count int\n  field static label str\n",
			"func a.ann(a dict, b str) list\n",
			"global a.K.count = 3\n    global a.K.label = \"x\"\n",
		}},
		{"lambdas are numbered past nine", `
def lams(x):
    a = lambda: x
    b = lambda: x
    c = lambda: x
    d = lambda: x
    e = lambda: x
    f = lambda: x
    g = lambda: x
    h = lambda: x
    i = lambda: x
    j = lambda y: y
    k = lambda z: x
    return k
`, []string{"$t10 = func a.lams$lambda10\n    j = $t10\n", "func a.lams$lambda10(y) in a.lams\n  b0:\n    return y", "func a.lams$lambda11(z) in a.lams\n  b0:\n    return x"}},
	})
}

// Structural pattern matching, exception tuples, literals and slices,
// enumerate and iteration over strings.
func TestPythonMatchExceptLiteralsEnumerate(t *testing.T) {
	t.Parallel()
	pythonFE.run(t, "a.py", []dumpCase{
		{"match sequences, mappings with as, star patterns and alternatives", `
def m(cmd):
    match cmd:
        case "go", d:
            use(d)
        case {"k": v} as whole:
            use(v, whole)
        case [a, *others]:
            use(a, others)
        case Point(x=0) | Point(y=0):
            pass
`, []string{
			"$t2 = cmd[1]\n    d = $t2\n",
			"whole = cmd\n    $t5 = cmd[\"k\"]\n    v = $t5\n",
			"$t8 = cmd[0]\n    a = $t8\n    $t9 = cmd[_]\n    $t10:list = list list [$t9]\n    others:list = $t10\n",
			// either alternative reaches the case body
			"if $t13 b9 b10\n", "$t14 = opaque(cmd)\n    if $t14 b9 b8",
		}},
		{"an exception tuple catches each type", `
def tr():
    try:
        risky()
    except (ValueError, TypeError) as e:
        log(e)
`, []string{"$t2:ValueError = catch ValueError|TypeError\n    e:ValueError = $t2\n    $t3 = call.func log(e)\n"}},
		{"octal, booleans, None, slices and walrus", `
def lit():
    a = 0o17
    b = True
    c = None
    d = x[1:2]
    return (y := 3)
`, []string{"a:int = 15\n    b:bool = true\n    c = null\n", "$t2:slice = call.func slice(1, 2, null)\n    $t3 = call.method $t1.__getitem__($t2)\n", "y:int = 3\n    return 3"}},
		{"enumerate indexes are ints and strings iterate into strings", `
def en(xs):
    for i, v in enumerate(xs):
        use(i, v)
    for ch in "abc":
        use(ch)
`, []string{"$t2 = xs[_]\n    $t3:int = opaque()\n    i:int = $t3\n    v = $t2\n", "$t6:str = \"abc\"[_]\n    ch:str = $t6\n"}},
	})
}
