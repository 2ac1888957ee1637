package python

import (
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// lowerSource parses and lowers one file and validates the IR.
func lowerSource(t testing.TB, path string, src []byte) *ir.File {
	t.Helper()
	return lowertest.Lower(t, syntax.Python, Lower, path, src)
}

// Each case is a small module (at path, default app/views.py); its IR dump
// is compared with testdata/golden/<name>.ir (go test -run TestLowerGolden
// -update rewrites them).
var goldenCases = []struct{ name, path, src string }{
	{"imports", "app/views.py", `import os
import os.path as osp
import xml.etree.ElementTree
from flask import request, Flask
from subprocess import run as sh
from markupsafe import Markup
from lxml import etree
os.system(request.args["cmd"])
osp.join("a", "b")
os.path.join("c", "d")
xml.etree.ElementTree.fromstring("<a/>")
sh(["ls"])
Markup("<b>")
x = os.environ
y = request.form.get("k")
`},
	{"relative_imports", "app/api/users.py", `from . import models
from .. import config
from .db import query as q
from ..core.auth import login
from .helpers import *
q(models.User, config.NAME)
login()
`},
	{"package_init", "pkg/__init__.py", `from .m import f
f(1)
`},
	{"module_globals", "app/settings.py", `import sqlite3
DEBUG = False
LIMIT: int = 10
conn = sqlite3.connect("x.db")
items = []
def f():
    return LIMIT + len(items)
def g():
    global DEBUG
    DEBUG = True
def h():
    return f() + helper
helper = f
`},
	{"classes", "app/models.py", `from django.db import models
class Base:
    pass
class User(Base, models.Model):
    table = "users"
    count: int = 0
    def __init__(self, name):
        super().__init__()
        self.name = name
    def greet(self, other: "User") -> str:
        return "hi " + self.name + other.name
    @staticmethod
    def make(n):
        return User(n)
    @classmethod
    def build(cls, n):
        return cls(n)
    class Meta:
        ordering = ["name"]
u = User("bob")
u.greet(User.make("x"))
User.table
`},
	{"closures", "app/views.py", `def outer(a):
    b = 1
    def inner(c):
        nonlocal b
        b = c
        return a + c
    f = lambda x, y=2: x + a + y
    class Local:
        def run(self):
            return a
    return inner(b) + f(1) + Local().run()
`},
	{"comprehensions", "app/views.py", `def f(rows, d):
    a = [r.name for r in rows if r.ok]
    b = {k: v for k, v in d.items()}
    c = {x for x in a}
    g = list(y * 2 for y in rows)
    n = [i for row in rows for i in row]
    return a, b, c, g, n, r
`},
	{"if_while_for", "app/views.py", `def f(x, items):
    if x > 1:
        y = 1
    elif x:
        y = 2
    else:
        y = 3
    while x:
        x -= 1
        if x == 5:
            break
    else:
        y = 4
    for i, (a, b) in items:
        if a:
            continue
        y = b
    else:
        y = 5
    for n, item in enumerate(items):
        y = item
    return y
`},
	{"constant_condition", "app/views.py", `DEBUG = False
def f(x):
    if False:
        return x
    if 1 == 2:
        return x
    while True:
        break
    return "safe"
`},
	{"match", "app/views.py", `def f(cmd, p):
    match cmd:
        case "start" | "go":
            r = 1
        case 2:
            r = 2
        case -1:
            r = 3
        case Color.RED:
            r = 4
        case str() as s if s:
            r = s
        case [first, *rest]:
            r = first
        case {"k": v}:
            r = v
        case Point(x=0, y=yy):
            r = yy
        case other:
            r = other
    match p:
        case _:
            pass
    return r
`},
	{"try", "app/views.py", `def f(x):
    try:
        y = int(x)
    except (ValueError, TypeError) as e:
        y = str(e)
        raise
    except KeyError:
        raise RuntimeError("k") from None
    else:
        y = y + 1
    finally:
        x = None
    try:
        pass
    finally:
        y = 0
    return y
`},
	{"with_assert_del", "app/views.py", `def f(path, d, lock):
    with open(path) as fh, lock:
        data = fh.read()
    with (open(path) as a, open(data) as b):
        pass
    assert data, "empty"
    assert d
    del d["k"], data
    del d.attr
    return d
`},
	{"assignments", "app/views.py", `def f(o, d, xs):
    a = b = 1
    c, d2 = 1, "s"
    e, *rest = xs
    [g, h] = xs
    o.x = a
    d["k"] = c
    xs[1:3] = [1]
    a += 2
    o.n += 1
    d["k"] *= 2
    v: str = "x"
    if (n := len(xs)) > 1:
        return n
    return a, c, d2, e, rest, g, h, v
`},
	{"expressions", "app/views.py", `def f(a, b, c, xs):
    t = (1, "two", 3.5, True, None, ...)
    l = [a, *xs]
    s = {1, 2}
    d = {"k": a, **c}
    x = xs[0] + xs[-1] + xs[1:] + xs[::2] + xs[a, b]
    y = a < b <= c
    z = a < b < len(c)
    w = a in xs and b not in xs or a is not None
    u = a and f2(b)
    v = a or f2(b)
    q = not a
    r = -a + ~b + -1 + 0x1F + 1_000
    k = a if b else c
    return t, l, s, d, x, y, z, w, u, v, q, r, k
`},
	{"strings", "app/views.py", `def f(name, n, w):
    a = f"Hello {name}!"
    b = f"{n!r:>10} {{lit}} {name:{w}}"
    c = "abc" "def" f"{name}"
    d = "SELECT %s FROM t WHERE id = %d" % (name, n)
    e = "x=%s" % name
    g = "{} {}".format(name, n)
    h = "tab\there \x41\u00e9 \\ \n" r"raw\n" b"bytes"
    i = f"{name}"
    return a, b, c, d, e, g, h, i
`},
	{"calls", "app/views.py", `import subprocess
def f(cmd, args, kw, cb):
    subprocess.run(cmd, shell=True, check=False)
    print(*args, **kw, sep="")
    cb(1)
    cmd.strip().lower()
    (lambda q: q)(2)
    open(cmd).read()
    str(1)
    return max(args, key=len)
`},
	{"generators_async", "app/views.py", `async def fetch(client, url):
    r = await client.get(url)
    return r
def gen(xs):
    for x in xs:
        yield x
    yield from xs
    got = yield
    return got
`},
	{"decorators", "app/api.py", `from flask import Flask, Blueprint
from fastapi import FastAPI, Query, Body, Depends
from typing import Optional, List, Annotated
import functools
app = Flask(__name__)
bp = Blueprint("b", __name__)
api = FastAPI()
@app.route("/a/<name>", methods=["GET", "POST"])
def a(name):
    return name
@bp.get("/b")
@functools.lru_cache(maxsize=10)
def b():
    return "b"
@api.post("/items/{item_id}")
async def c(item_id: int, q: Optional[str] = Query(None, max_length=5), body: dict = Body(...),
            tags: List[str] = [], auth: Annotated[str, Depends(None)] = ""):
    return q
`},
	{"continuations", "app/views.py", `import os
def f(a, b):
    os.system(a, \
              b)
    x, \
        y = a, b
    return [a,  # first
            b]
`},
	{"py2_and_errors", "app/legacy.py", `print "hello", x
exec "code"
def broken(:
    pass
x = 1
`},
}

func TestLowerGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			lowertest.Golden(t, tc.name, lowerSource(t, tc.path, []byte(tc.src)))
		})
	}
}

func TestModulePath(t *testing.T) {
	for _, tc := range []struct{ path, module, pkg string }{
		{"app/views.py", "app.views", "app"},
		{"pkg/__init__.py", "pkg", "pkg"},
		{"main.py", "main", ""},
		{"__init__.py", "", ""},
		{"./a/b/c.py", "a.b.c", "a.b"},
		{"a.b/c.py", "a.b.c", "a.b"},
	} {
		m, p := ModulePath(tc.path)
		require.Equal(t, tc.module, m, tc.path)
		require.Equal(t, tc.pkg, p, tc.path)
	}
}

// corpusFiles lists every Python file of the labelled corpus.
func corpusFiles(t testing.TB) []string { return lowertest.CorpusFiles(t, "python") }

func TestLowerCorpus(t *testing.T) {
	lowertest.LowerCorpus(t, "python", syntax.Python, Lower)
}

func TestLowerRejectsOtherTrees(t *testing.T) {
	_, err := Lower("x.py", nil, &syntax.Node{Type: "program"})
	require.ErrorIs(t, err, ErrNotModule)
}

// TestLowerFacts checks the facts analyses rely on, independently of the
// dump format.
func TestLowerFacts(t *testing.T) {
	src := `from flask import request
import os
class Repo:
    def __init__(self, db):
        self.db = db
    def find(self, q):
        return self.db.execute(q)
def view():
    r = Repo(os.environ.get("DB"))
    return r.find(request.args["q"])
`
	f := lowerSource(t, "app/views.py", []byte(src))
	require.Equal(t, "app.views", f.Package)
	require.Len(t, f.Classes, 1)
	c := f.Classes[0]
	require.Equal(t, "app.views.Repo", c.QName)
	require.Len(t, c.Methods, 2)
	find := c.Methods[1]
	require.Equal(t, "app.views.Repo.find", find.QName)
	require.NotEqual(t, ir.NoVar, find.This)
	require.Equal(t, "app.views.Repo", find.Vars[find.This].Type)
	require.Len(t, find.Params, 1)
	var view *ir.Func
	for _, fn := range f.Funcs {
		if fn.Name == "view" {
			view = fn
		}
	}
	require.NotNil(t, view)
	var kinds []string
	for _, blk := range view.Blocks {
		for _, in := range blk.Instrs {
			switch in.Op {
			case ir.OpCall:
				kinds = append(kinds, in.Call.Qual+"#"+in.Call.Name)
			case ir.OpLoadGlobal:
				kinds = append(kinds, "global "+in.Name)
			}
		}
	}
	require.Equal(t, []string{"os.environ#get", "app.views.Repo#<init>", "global flask.request", "#find"}, kinds)
}
