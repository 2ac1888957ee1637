package javascript

import (
	"strings"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// lowerSource parses and lowers src as the repository file path.
func lowerSource(t testing.TB, path, src string) *ir.File {
	t.Helper()
	return lowertest.Lower(t, syntax.LangFor(path), Lower, path, []byte(src))
}

// goldenCases are small snippets of each construct; their IR dumps are
// compared with testdata/golden/<name>.ir.
var goldenCases = []struct {
	name, path, src string
}{
	{"imports_es", "src/app.js", `import def, {a as b, c} from './lib/x';
import * as ns from 'mod';
import cp from 'child_process';
def(1); b(2); ns.run(3); cp.exec(c); const v = ns.value;`},
	{"imports_require", "src/app.js", `const {exec, spawn: sp} = require('child_process');
const db = require('../db');
const fsp = require('fs').promises;
exec('ls'); sp('ls'); db.findUser(1); fsp.readFile('x');
function f() { const os = require('os'); return os.hostname() + db.name; }`},
	{"module_globals", "src/app.js", `let count = 0;
const limit = 10;
function bump(n) { count = count + n; return count < limit; }
count = 5;
bump(1);`},
	{"exports_commonjs", "src/db.js", `function findUser(id) { return id; }
function helper() {}
module.exports = { findUser, getUser: helper, run(x) { return x; }, version: 2 };
exports.extra = function (y) { return y; };`},
	{"exports_es", "src/api/handler.js", `export function list(req) { return req; }
export const limit = 5;
function internal() {}
export { internal as exposed };
export default function handler(req, res) { res.end(); }`},
	{"default_class_export", "src/svc.js", `class Service { run(x) { return x; } static create() { return new Service(); } }
module.exports = Service;`},
	{"prototype_class", "src/repo.js", `function Repo(db) { this.db = db; }
Repo.prototype.find = function (id) { return this.db.query('q' + id); };
Repo.prototype = { ...Repo.prototype, count() { return this.db.count(); } };
module.exports = Repo;
function use() { return new Repo(null).find(1); }`},
	{"arguments", "src/app.js", `function log(a, b) { const all = arguments; return () => arguments[0] + all[1]; }`},
	{"functions_closures", "src/app.js", `function outer(a) {
  let b = a + 1;
  const add = (c) => b + c;
  function inner(d) { return add(d); }
  return inner(2);
}`},
	{"shadowing", "src/app.js", `function f(a) {
  if (a) { const c = a; run(() => c); } else { const c = 'ls'; run(() => c); }
  for (const a of [1]) { use(a); }
}`},
	{"callbacks", "src/app.js", `const app = require('express')();
app.get('/x', (req, res) => { res.send(req.query.q); });
[1, 2].forEach(function (n) { console.log(n); });`},
	{"classes", "src/repo.js", `const { Pool } = require('pg');
class Repo extends Base {
  #secret = 1;
  items = [];
  static shared = new Pool();
  constructor(db) { super(db); this.db = db; }
  get size() { return this.items.length; }
  set size(v) { this.items.length = v; }
  find(id) { const run = () => this.db.query('q' + id); return run(); }
  static create() { return new Repo(Repo.shared); }
}`},
	{"async_generators", "src/app.js", `async function load(url) { const r = await fetch(url); return r.json(); }
function* gen(xs) { for (const x of xs) { yield x; } }`},
	{"if_loops", "src/app.js", `function f(xs, n) {
  if (n > 1) { n = 1; } else if (n < 0) { n = 0; } else { n = 2; }
  while (n) { n--; }
  do { n++; } while (n < 3);
  for (let i = 0; i < n; i++) { if (i) continue; }
  return n;
}`},
	{"for_of_in", "src/app.js", `function f(obj, arr) {
  for (const [k, v] of Object.entries(obj)) { use(k, v); }
  for (const key in obj) { use(key); }
  for (const item of arr) { use(item); }
}`},
	{"switch", "src/app.js", `function f(mode) {
  switch (mode) { case 'a': one(); case 'b': two(); break; default: three(); }
}`},
	{"try_catch", "src/app.js", `function f() {
  try { risky(); } catch ({ message }) { log(message); } finally { done(); }
  try { risky(); } finally { done(); }
  throw new Error('x');
}`},
	{"labels", "src/app.js", `function f(rows) {
  outer: for (const r of rows) { for (const c of r) { if (c) break outer; continue outer; } }
  block: { if (rows) break block; use(rows); }
}`},
	{"templates", "src/app.js", "function f(a, b) { const s = `x${a}y${b}`; return sql`SELECT ${a}`; }"},
	{"optional_nullish_logical", "src/app.js", `function f(a, b) {
  const x = a?.b?.c;
  const y = a ?? b;
  const z = a && b();
  const w = a || (b = 2);
  a?.run(b);
  return x + y + z + w;
}`},
	{"ternary", "src/app.js", `function f(a, b) { return a ? b : 'none'; }`},
	{"object_array_literals", "src/app.js", `function f(a, k, rest, list) {
  const o = { a, b: 1, [k]: 2, 'c-d': 3, m() { return a; }, ...rest };
  const arr = [a, 2, ...list];
  return [o, arr];
}`},
	{"destructuring", "src/app.js", `function f({ a, b: [c, , d = g()], ...rest }, [first, ...others] = []) {
  let x, y;
  [x, y] = [y, x];
  ({ a: x } = rest);
  return a + c + d + first + x + y + others;
}`},
	{"compound_update", "src/app.js", `function f(o, i) { o.n += 1; o['k'] -= i; i++; --i; o.s ??= 'd'; return i; }`},
	{"member_access", "src/app.js", `function f(o, k) { o.a = o['b']; o[0] = o[k]; o[k] = 1; delete o.a; return [typeof k, void 0]; }`},
	{"new_and_globals", "src/app.js", `function f(x) {
  const m = new Map();
  const u = new URL(x);
  const r = /ab+c/i;
  document.write(x);
  el.innerHTML = x;
  location.href = x;
  window.location = x;
  return [m, u, r, process.env.HOME, window.name, Math.random()];
}`},
	{"ts_types", "src/handler.ts", `import type { Request, Response } from 'express';
import { Repo } from './repo';
interface Named { name: string }
export async function get(req: Request, res: Response): Promise<void> {
  const id: string = req.params.id as string;
  const repo: Repo = new Repo();
  const n = req.body as Named;
  const maybe: Repo | undefined = undefined;
  res.send(id + n.name + repo + maybe!);
}`},
	{"ts_class_enum_namespace", "src/model.ts", `enum Color { Red = 1, Green }
namespace Util { export function twice(x: number) { return x * 2; } }
abstract class Shape implements Named { abstract area(): number; constructor(private readonly name: string) {} }
class Square extends Shape { area() { return Util.twice(Color.Green); } }`},
	{"decorators", "src/users.controller.ts", `import { Controller, Get, Param, Query } from '@nestjs/common';
@Controller('users')
export class UsersController {
  constructor(private readonly svc: UsersService) {}
  @Get(':id')
  find(@Param('id') id: string, @Query() q: Filter) { return this.svc.find(id, q); }
}`},
	{"jsx", "src/page.jsx", `import Comment from './comment';
export default function Page({ body, title }) {
  return <div className="c" title={title} onClick={() => go(title)} dangerouslySetInnerHTML={{ __html: body }}>{title}<Comment text={body} /></div>;
}`},
	{"tsx", "app/api/items/route.tsx", `export async function GET(request: Request) {
  const q = new URL(request.url).searchParams.get('q');
  return <p>{q}</p>;
}`},
}

func TestLowerGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			lowertest.Golden(t, tc.name, lowerSource(t, tc.path, tc.src))
		})
	}
}

// TestLowerFacts checks properties of the lowering that the analysis
// relies on, independently of the golden dumps.
func TestLowerFacts(t *testing.T) {
	find := func(f *ir.File, qname string) *ir.Func {
		for _, fn := range f.Funcs {
			if fn.QName == qname {
				return fn
			}
		}
		t.Fatalf("no function %s", qname)
		return nil
	}
	calls := func(fn *ir.Func) []string {
		var out []string
		for _, blk := range fn.Blocks {
			for i := range blk.Instrs {
				if in := &blk.Instrs[i]; in.Op == ir.OpCall {
					out = append(out, ir.InstrString(fn, in))
				}
			}
		}
		return out
	}
	tests := []struct {
		name, path, src, fn string
		want                []string // substrings of the function's call instructions, in order
	}{
		{"imported function", "src/a.js", "const {exec} = require('child_process'); function f(x) { exec(x); }", "src/a.f",
			[]string{"call.func child_process#exec(x)"}},
		{"namespace call", "src/a.js", "import * as cp from 'child_process'; function f(x) { cp.execSync(x); }", "src/a.f",
			[]string{"call.static child_process#execSync(x)"}},
		{"relative module", "src/a.js", "const db = require('./db/index.js'); function f(x) { db.query(x); }", "src/a.f",
			[]string{"call.static src/db#query(x)"}},
		{"default import call", "src/a.js", "import h from '../h'; function f(x) { h(x); }", "src/a.f",
			[]string{"call.func h#default(x)"}},
		{"module value call", "src/a.js", "const express = require('express'); function f() { return express(); }", "src/a.f",
			[]string{"call.func express#default()"}},
		{"setter call", "src/a.js", "function f(el, x) { el.innerHTML = x; }", "src/a.f",
			[]string{"call.method el.set:innerHTML(x)"}},
		{"closure captured", "src/a.js", "function f(x) { return () => g(x); }", "src/a.f$lambda1",
			[]string{"call.func g(x)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := lowerSource(t, tc.path, tc.src)
			got := strings.Join(calls(find(f, tc.fn)), "\n")
			for _, w := range tc.want {
				require.Contains(t, got, w)
			}
		})
	}
	f := lowerSource(t, "src/a.js", "function f(x) { return () => g(x); }")
	inner := find(f, "src/a.f$lambda1")
	require.NotNil(t, inner.Parent)
	require.True(t, inner.Vars[0].Captured, "x is captured from f")
	f = lowerSource(t, "src/a.ts", "class C { m(): void {} }")
	m := find(f, "src/a.C.m")
	require.Equal(t, "src/a.C", m.Vars[m.This].Type)
	require.Equal(t, "src/a", f.Package)
}

func TestModulePaths(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"src/app.js", "src/app"},
		{"src/db/index.ts", "src/db"},
		{"index.js", "index"},
		{"lib/types.d.ts", "lib/types"},
		{"pages/api/[id].tsx", "pages/api/[id]"},
	} {
		require.Equal(t, tc.want, modulePath(tc.file), tc.file)
	}
	for _, tc := range []struct {
		from, spec, want string
		rel              bool
	}{
		{"src/app.js", "./db", "src/db", true},
		{"src/app.js", "../lib/util.js", "lib/util", true},
		{"src/app.js", "./models/index", "src/models", true},
		{"src/app.js", ".", "src", true},
		{"src/app.js", "child_process", "child_process", false},
		{"src/app.js", "node:fs", "fs", false},
		{"src/app.js", "@koa/router", "@koa/router", false},
	} {
		got, rel := resolveSpecifier(tc.from, tc.spec)
		require.Equal(t, tc.want, got, tc.spec)
		require.Equal(t, tc.rel, rel, tc.spec)
	}
}

// TestLowerCorpus lowers every JavaScript and TypeScript file of the
// labelled corpus and validates the IR.
func TestLowerCorpus(t *testing.T) {
	lowertest.LowerCorpus(t, "javascript", nil, Lower)
}

func corpusFiles(t testing.TB) []string { return lowertest.CorpusFiles(t, "javascript") }
