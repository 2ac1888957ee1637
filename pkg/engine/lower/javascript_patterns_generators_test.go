package lower_test

import "testing"

// Labels, computed destructuring keys and defaults, generators, async
// iteration, spread and optional calls, each checked in its lowered IR.
func TestJavaScriptLabelsPatternsGeneratorsSpread(t *testing.T) {
	t.Parallel()
	jsFE.run(t, "a.js", []dumpCase{
		{"labelled loops and blocks take break and continue", `
function lab(a) {
  outer: for (let i = 0; i < a.length; i++) {
    for (;;) { if (a[i]) continue outer; break outer; }
  }
  blk: { if (a) break blk; use(a); }
}
`, []string{
			// the increment of the outer loop
			"  b3:\n    $t4 = i\n    $t5 = $t4 + 1\n    i = $t5\n    jump b1\n",
			// continue outer goes to the increment, break outer past the loop
			"  b6:\n    $t3 = a[i]\n    if $t3 b9 b10\n", "  b9:\n    jump b3\n", "  b10:\n    jump b4\n",
			// break blk skips the rest of the block
			"  b4:\n    if a b13 b14\n", "  b13:\n    jump b12\n", "  b14:\n    $t6 = call.func use(a)\n    jump b12\n",
		}},
		{"destructuring keys: computed, numeric, quoted, defaults", `
function keys(o, k) {
  const { [k]: v, 0: first, "q-r": qr, d = make(k), e = 1 } = o;
  return [v, first, qr, d, e];
}
`, []string{
			"$t1 = o[k]\n    v = $t1\n", "$t2 = o[0]\n    first = $t2\n", "$t3 = o.q-r\n    qr = $t3\n",
			// a computed default is evaluated only when the property is undefined
			"$t4 = o.d\n    $t5 = $t4\n    $t6 = $t4 === null\n    if $t6 b1 b2\n",
			"  b1:\n    $t7 = call.func make(k)\n    $t5 = $t7\n    jump b2\n  b2:\n    d = $t5\n",
			// a literal default carries no data and is dropped
			"$t8 = o.e\n    e = $t8\n",
		}},
		{"generators yield and delegate", `
function* gen(x) { yield x; yield* other(x); }
`, []string{"func a.gen(x)\n  b0:\n    $t1 = opaque()\n    $t2 = call.func other(x)\n    $t3 = opaque()\n    end"}},
		{"await is the awaited value and for-await iterates", `
async function as(u) { const r = await fetch(u); for await (const c of r) { use(c); } return r; }
`, []string{"$t1 = call.func fetch(u)\n    r = $t1\n", "$t2 = r[_]\n    c = $t2\n    $t3 = call.func use(c)\n", "return r"}},
		{"spread arguments, array and object spread, optional call", `
function spr(a, o) { f(...a); const b = [...a, 1]; const c = { ...o, k: 1 }; return o?.m?.(a); }
`, []string{
			"$t1 = a[_]\n    $t2 = call.func f($t1)\n",
			"$t3 = a[_]\n    $t4:Array = list Array [1]\n    $t4[_] = $t3\n    b = $t4\n",
			"$t5:Object = map Object {\"k\", 1}\n    $t6:Object = call.static Object#assign($t5, o)\n    c = $t5\n",
			"$t7 = call.method o.m(a)\n    return $t7",
		}},
	})
}

// Module-level types made evident by initializers, member decorators and
// superclasses, delete, and this outside methods.
func TestJavaScriptModuleTypesDecoratorsDelete(t *testing.T) {
	t.Parallel()
	jsFE.run(t, "a.js", []dumpCase{
		{"module initializers give their globals a type", `
const re = /a+/;
const arr = [];
const obj = {};
const lib = new mod.Lib();
`, []string{
			"$t1:RegExp = call.new RegExp#<init>(\"a+\", \"\")\n    re:RegExp = $t1\n    global a.re = re\n",
			"arr:Array = $t2\n", "obj:Object = $t3\n",
			"$t4:mod.Lib = call.new mod.Lib#<init>()\n    lib:mod.Lib = $t4\n",
		}},
		{"member decorators and superclasses resolve through a namespace import", `
import * as nest from "@nestjs/common";
class C extends nest.Base {
  @nest.Get("/x")
  get(q) { return q; }
}
class M extends Mixin(Base) {}
`, []string{"class a.C : @nestjs/common.Base\n", `func a.C.get(q) this=this @@nestjs/common.Get(0="/x")`, "class a.M\n"}},
		{"delete clears fields and indexes", `
function del(o, k) { delete o.p; delete o["s"]; delete o[k]; }
`, []string{"o.p = null\n    o.s = null\n    o[k] = null\n"}},
		{"this in a plain function and at module level", `
function plain() { return this.x; }
const top = this;
`, []string{"func a.plain()\n  b0:\n    $t1 = this.x\n    return $t1", "$t1 = global a\n    top = $t1\n"}},
	})
}

// Comma expressions, class expressions as values, global constants, with
// statements, object literal accessors and TypeScript namespaces.
func TestJavaScriptSequencesObjectsNamespaces(t *testing.T) {
	t.Parallel()
	jsFE.run(t, "a.js", []dumpCase{
		{"comma expressions, anonymous class values and global constants", `
function seq(a) { const x = (use(a), a + 1); const k = reg(class { m() {} }); return [x, undefined, NaN, Infinity]; }
`, []string{
			"$t1 = call.func use(a)\n    $t2 = a + 1\n    x = $t2\n",
			"class a.seq$class1\n", "$t3 = global a.seq$class1\n    $t4 = call.func reg($t3)\n", "func a.seq$class1.m() this=this in a.seq",
			"list Array [x, null, NaN, +Inf]",
		}},
		{"with statements run their body", `
function withs(o) { with (o) { use(o.p); } }
`, []string{"$t1 = o.p\n    $t2 = call.func use($t1)\n"}},
		{"object literal accessors, methods and computed keys", `
function lits(p) { const o = { get g() { return p; }, set s(v) { this.v = v; }, m(q) { return q; }, [p]: 1, "str": p }; return o; }
`, []string{
			`map Object {"g", $t1, "s", $t2, "m", $t3, p, 1, "str", p}`,
			"func a.lits$g() in a.lits\n  b0:\n    return p", "func a.lits$s(v) in a.lits\n  b0:\n    this.v = v\n", "func a.lits$m(q) in a.lits\n",
		}},
	})
	tsFE.run(t, "a.ts", []dumpCase{
		{"namespace members are qualified by the namespace", `
namespace NS { export function f(x: string) { return x; } }
`, []string{"func a.NS.f(x String)\n  b0:\n    return x"}},
	})
}

// require destructuring, dynamic calls, super calls, static members,
// constructors held in variables and interfaces.
func TestJavaScriptRequireDynamicCallsStatics(t *testing.T) {
	t.Parallel()
	jsFE.run(t, "a.js", []dumpCase{
		{"destructured require with defaults, rest and default", "const { exec, spawn = null, ...restCp } = require(`child_process`);\n" + `
const { default: lodash } = require("lodash");
`, []string{"import exec = child_process.exec\n", "import lodash = lodash\n", "import restCp = child_process\n", "import spawn = child_process.spawn\n"}},
		{"calls through string subscripts, computed members and expressions", `
function dyn(m, o, k) {
  o["run"](k);
  o[k](k);
  (m || o)(k);
}
`, []string{"$t1 = call.method o.run(k)\n    $t2 = o[k]\n    $t3 = call.dynamic $t2.(k)\n    $t4 = m || o\n    $t5 = call.dynamic $t4.(k)\n"}},
		{"super calls, static blocks and static arrow fields", `
class Base { hi(x) { return x; } }
class Kid extends Base {
  static { init(); }
  static make = () => new Kid(1);
  hi(x) { return super.hi(x); }
}
`, []string{
			"class a.Kid : a.Base\n  field static make", "func a.Kid.hi(x) this=this\n  b0:\n    $t1 = call.super hi(x)\n    return $t1",
			"$t1:a.Kid = call.new a.Kid#<init>(1)\n", "$t1 = call.func init()\n", "global a.Kid.make = $t2\n",
		}},
		{"new on a parameter is a dynamic call; many parameters with a pattern", `
function mk(C, x) { return new C(x); }
function manyArgs(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, [a11], ...more) { return a11; }
`, []string{"$t1 = call.dynamic C.(x)\n    return $t1", "func a.manyArgs(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, $p11, more)\n  b0:\n    $t1 = $p11[0]\n    a11 = $t1\n"}},
	})
	tsFE.run(t, "a.ts", []dumpCase{
		{"interfaces list what they extend; abstract methods have no body", `
interface Svc extends Base, Other<T> { run(x: string): void; }
abstract class A { abstract go(): void; }
`, []string{"interface a.Svc : Base, Other\n", "func abstract a.A.go() this=this\n  b0:\n    end"}},
	})
}
