package lower_test

import "testing"

// Each case lowers a small module and checks lines (or runs of lines) of
// its IR dump.
func TestJavaScriptConstructs(t *testing.T) {
	t.Parallel()
	jsFE.run(t, "a.js", []dumpCase{
		{"negative numbers and negated booleans fold", `
const a = -5;
const b = -2.5;
const c = !true;
const n = -a;
`, []string{"a = -5\n", "b = -2.5\n", "c = false\n", "= - a\n"}},
		{"string escapes decode", `
const d = "a\nb\t\x41\u0042\u{43}\'\\";
const e = 'q\"';
const t = ` + "`x\\u0041${d}`" + `;
`, []string{`d:String = "a\nb\tABC'\\"`, `e:String = "q\""`, `"xA"`}},
		{"number literals in every base", `
const f = 0x1F + 0o17 + 0b11 + 1_000 + 1e3;
`, []string{"= 31 + 15\n", "+ 3\n", "+ 1000\n"}},
		{"class expressions bound to names are classes", `
const K = class { run(x) { return x; } };
const Named = class Foo { go() { return 1; } };
`, []string{"class a.K\n", "class a.Named\n", "func a.K.run(x) this=this", "func a.Named.go() this=this"}},
		{"export under another name forwards to the function", `
function inner(p, q) { return p; }
export { inner as renamed };
`, []string{"func a.renamed(p0, p1) @export:renamed\n  b0:\n    $t1 = call.func inner(p0, p1)\n    return $t1", "global a.renamed = "}},
		{"anonymous default class", `
export default class { m() {} }
`, []string{"class a\n", "func a.m() this=this"}},
		{"object and array destructuring", `
const { x, y: [z], ...rest } = obj;
`, []string{"= $t1.x\n    x = ", "= $t1.y\n", "[0]\n    z = ", "= opaque($t1)\n    rest = "}},
	})
	tsFE.run(t, "a.ts", []dumpCase{
		{"typescript enum members are static globals", `
enum Color { Red = "r", Green = "g" }
const c = Color.Red;
`, []string{"class a.Color\n  field static Red", `global a.Color.Red = "r"`, `global a.Color.Green = "g"`, "= global a.Color.Red"}},
		{"typescript parameter properties store into this", `
class Items {
  constructor(private readonly svc: Service, public name: string, plain: string) {}
}
`, []string{"func a.Items.<init>(svc Service, name String, plain String) this=this\n  b0:\n    this.svc = svc\n    this.name = name\n    end"}},
		{"typescript decorators are resolved through imports", `
import { Get, Query } from "@nestjs/common";
class Items {
  @Get(":id")
  find(@Query("q") q: string): string { return q; }
}
`, []string{`func a.Items.find(@@nestjs/common.Query q String) String this=this @@nestjs/common.Get(0=":id")`}},
		{"typescript casts and non-null assertions are the value", `
function f(q: string) {
  const v = q as string;
  const w = <string>q;
  const u = q!;
  return v + w + u;
}
`, []string{"v = q\n    w = q\n    u = q\n"}},
		{"typescript parameter types", `
import { Request } from "express";
function f(a: number, b?: string, c: Request | null, d: string[], e: Array<string>) { return a; }
`, []string{"func a.f(a, b String, c express.Request, d Array, e Array)"}},
	})
}

// Code after a syntax error is still lowered as far as it is recognisable.
func TestJavaScriptRecoversFromSyntaxErrors(t *testing.T) {
	t.Parallel()
	src := "const cp = require('child_process');\nfunction f(x) {\n  cp.exec(x);\n  let = = ;\n  cp.execSync(x);\n}\n"
	jsFE.requireDump(t, "a.js", src, "call.static child_process#exec(x)", "call.static child_process#execSync(x)")
}

// Statements and expressions of modern JavaScript and TypeScript, each
// checked in the lowered function it belongs to.
func TestJavaScriptStatementsAndOperators(t *testing.T) {
	t.Parallel()
	src := `import fs = require("fs");
import "reflect-metadata";
import * as path from "path";
import def, { a as b } from "./lib/mod";
class Fields {
  count = 0;
  handler = () => this.count;
  static shared = 1;
}
function tagged(s: string) { return html` + "`<p>${s}</p>`" + `; }
function opt(o: any) { return o?.a?.b ?? "d"; }
function assign() { let x = 0; x += 2; x ||= 3; x &&= 4; x ??= 5; return typeof x; }
function loops(o: any) { for (const k in o) { use(k); } for (const v of o) { use(v); } do { use(1); } while (false); }
function sw(x: number) { switch (x) { case 1: return "a"; case 2: case 3: return "b"; default: return "c"; } }
function tr() { try { risky(); } catch { fallback(); } finally { done(); } }
const el = <div className={cls} {...props}>hi {name}</div>;
`
	tsxFE.requireDump(t, "web/c.tsx", src,
		// every import form binds a qualified name
		"import fs = fs\n", "import path = path\n", "import def = web/lib/mod\n", "import b = web/lib/mod.a\n", "import  = reflect-metadata\n",
		// instance fields without a constructor get one
		"func web/c.Fields.<init>() this=this\n  b0:\n    this.count = 0\n", "this.handler = $t1",
		"func web/c.Fields.<init>$handler() in web/c.Fields.<init>", "global web/c.Fields.shared = 1",
		// a tagged template calls the tag with the strings and the values
		`list Array ["<p>", "</p>"]`+"\n    $t2 = call.func html($t1, s)",
		// optional chaining and nullish coalescing
		"$t1 = o.a\n    $t2 = $t1.b\n    $t3 = $t2 ?? \"d\"",
		// compound assignments
		"$t1 = x + 2\n    x = $t1\n    $t2 = x || 3\n    x = $t2\n    $t3 = x && 4\n    x = $t3\n    $t4 = x ?? 5\n    x = $t4",
		"= typeof x",
		// for-in reads keys, for-of elements; do-while tests after the body
		"= opaque(o)\n    k = ", "= o[_]\n    v = ", "call.func use(1)\n    jump b8\n  b8:\n    if false b7 b9",
		// switch cases become equality branches
		"= x === 1\n", "= x === 2\n", "= x === 3\n", `return "c"`,
		// try, catch and finally
		"  b3: handlers [1]\n    $t1 = call.func risky()", "catch \n    $t3 = call.func fallback()", "call.func done()",
		// JSX evaluates its attribute and child expressions
		"= global cls\n", "= global props\n", "= global name\n",
	)
}
