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
