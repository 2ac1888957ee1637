package ir_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
)

// sampleFile builds a small file using every instruction, terminator and
// declaration feature the dump renders.
func sampleFile() *ir.File {
	f := &ir.File{Path: "app/Svc.java", Lang: "java", Package: "app",
		Imports: []ir.Import{{Alias: "Statement", Path: "java.sql.Statement"}, {Alias: "List", Path: "java.util.List"}, {Alias: "*", Path: "java.io"}}}
	base := &ir.Class{Name: "Base", QName: "app.Base", Interface: true, File: f}
	svc := &ir.Class{Name: "Svc", QName: "app.Svc", Super: []string{"app.Base", "java.io.Serializable"}, File: f,
		Fields: []ir.Field{{Name: "count", Type: "int", Static: true}, {Name: "name", Type: "java.lang.String"}}}
	f.Classes = []*ir.Class{base, svc}

	lam := ir.NewBuilder(f, "<lambda>", "app.Svc.run$lambda1")
	lam.Captured("st", "java.sql.Statement")
	lamFn := lam.Finish(at(20))

	b := ir.NewBuilder(f, "run", "app.Svc.run")
	b.Fn.Class = svc
	b.Fn.Result = "int"
	b.Fn.Static = true
	b.Fn.Annotations = []ir.Annotation{{Name: "GetMapping", Args: map[string]string{"value": "/x", "produces": "json"}}, {Name: "Deprecated"}}
	this := b.This("this", "app.Svc")
	id := b.Param("id", "java.lang.String", []ir.Annotation{{Name: "RequestParam"}})
	st := b.Param("st", "", nil)
	lamFn.Parent = b.Fn

	catch := b.NewBlock()
	b.PushHandlers([]int{catch}, at(1))
	q := b.Binary("+", ir.C(ir.Str("select ")), ir.V(id), at(2))
	neg := b.Unary("!", ir.C(ir.Bool(true)), at(3))
	b.Call(&ir.Call{Kind: ir.CallMethod, Name: "execute", Recv: ir.V(st), Args: []ir.Value{q}}, "", at(4))
	b.Call(&ir.Call{Kind: ir.CallStatic, Qual: "java.lang.Runtime", Name: "getRuntime", Recv: ir.None}, "java.lang.Runtime", at(5))
	b.Call(&ir.Call{Kind: ir.CallFunc, Name: "open", Recv: ir.None, Args: []ir.Value{ir.V(id), ir.C(ir.Str("r"))}, Names: []string{"", "mode"}}, "", at(6))
	b.Call(&ir.Call{Kind: ir.CallNew, Qual: "java.io.File", Name: "<init>", Args: []ir.Value{ir.V(id)}, Recv: ir.None}, "java.io.File", at(7))
	b.Call(&ir.Call{Kind: ir.CallDynamic, Name: "call", Recv: ir.V(st)}, "", at(8))
	b.Call(&ir.Call{Kind: ir.CallSuper, Name: "<init>", Recv: ir.None}, "", at(9))
	fld := b.LoadField(ir.V(this), "name", "", at(10))
	b.StoreField(ir.V(this), "name", fld, at(11))
	el := b.LoadIndex(ir.V(st), ir.None, "", at(12))
	b.StoreIndex(ir.V(st), ir.C(ir.Int(1)), el, at(13))
	g := b.LoadGlobal("java:app.Svc.count", "int", at(14))
	b.StoreGlobal("java:app.Svc.count", g, at(15))
	lst := b.MakeList("java.util.List", []ir.Value{ir.C(ir.Int(1)), ir.C(ir.Float(2.5))}, at(16))
	b.MakeMap("", []ir.Value{ir.C(ir.Str("k")), ir.C(ir.Null())}, at(17))
	b.Closure(lamFn, at(18))
	b.Cast("int", lst, at(19))
	b.Opaque([]ir.Value{neg}, at(20))
	then, els := b.NewBlock(), b.NewBlock()
	b.If(neg, then, els, at(21))
	b.SetBlock(then)
	b.Return(ir.C(ir.Int(1)), at(23))
	b.SetBlock(els)
	b.Throw(q, at(24))
	b.PopHandlers(at(22))
	b.SetBlock(catch)
	ex := b.Var("e", "java.lang.Exception")
	b.Catch(ex, "java.sql.SQLException|java.io.IOException", at(25))
	b.Jump(then, at(26))
	run := b.Finish(at(27))
	svc.Methods = append(svc.Methods, run)

	abs := ir.NewBuilder(f, "find", "app.Base.find")
	abs.Fn.Abstract = true
	abs.Fn.Class = base
	abs.This("this", "")
	absFn := abs.Finish(at(30))
	base.Methods = append(base.Methods, absFn)

	init := ir.NewBuilder(f, "<module>", "app.<module>")
	init.StoreGlobal("app.X", ir.C(ir.Str("v")), at(31))
	f.Init = init.Finish(at(32))
	f.Funcs = []*ir.Func{run, lamFn, absFn}
	return f
}

const sampleDump = `file app/Svc.java (java) package "app"
import * = java.io
import List = java.util.List
import Statement = java.sql.Statement
interface app.Base
class app.Svc : app.Base, java.io.Serializable
  field static count int
  field name java.lang.String
func static app.Svc.run(@RequestParam id java.lang.String, st) int this=this @GetMapping(produces="json",value="/x") @Deprecated
  b0:
    jump b2
  b1:
    e:java.lang.Exception = catch java.sql.SQLException|java.io.IOException
    jump b3
  b2: handlers [1]
    $t1 = "select " + id
    $t2 = ! true
    $t3 = call.method st.execute($t1)
    $t4:java.lang.Runtime = call.static java.lang.Runtime#getRuntime()
    $t5 = call.func open(id, mode="r")
    $t6:java.io.File = call.new java.io.File#<init>(id)
    $t7 = call.dynamic st.call()
    $t8 = call.super <init>()
    $t9 = this.name
    this.name = $t9
    $t10 = st[_]
    st[1] = $t10
    $t11:int = global java:app.Svc.count
    global java:app.Svc.count = $t11
    $t12:java.util.List = list java.util.List [1, 2.5]
    $t13 = map  {"k", null}
    $t14 = func app.Svc.run$lambda1
    $t15:int = (int) $t12
    $t16 = opaque($t2)
    if $t2 b3 b4
  b3: handlers [1]
    return 1
  b4: handlers [1]
    throw $t1 [1]
func app.Svc.run$lambda1() in app.Svc.run
  b0:
    end
func abstract app.Base.find() this=this
  b0:
    end
func app.<module>()
  b0:
    global app.X = "v"
    end
`

func TestDumpRendersEveryConstruct(t *testing.T) {
	t.Parallel()
	f := sampleFile()
	require.NoError(t, ir.ValidateFile(f))
	require.Equal(t, sampleDump, ir.Dump(f))
}

func TestDumpIsDeterministic(t *testing.T) {
	t.Parallel()
	// Annotation arguments are a map: their order must not depend on it.
	first := ir.Dump(sampleFile())
	for range 20 {
		require.Equal(t, first, ir.Dump(sampleFile()))
	}
}

func TestDumpDoesNotReorderFileImports(t *testing.T) {
	t.Parallel()
	f := sampleFile()
	before := append([]ir.Import(nil), f.Imports...)
	ir.Dump(f)
	require.Equal(t, before, f.Imports, "Dump sorts a copy")
}

func TestDumpEmptyFile(t *testing.T) {
	t.Parallel()
	require.Equal(t, "file empty.py (python) package \"\"\n", ir.Dump(&ir.File{Path: "empty.py", Lang: "python"}))
}

func TestDumpFuncAlone(t *testing.T) {
	t.Parallel()
	b := ir.NewBuilder(&ir.File{}, "g", "m.g")
	p := b.Param("x", "", nil)
	b.Return(ir.V(p), at(1))
	var sb strings.Builder
	ir.DumpFunc(&sb, b.Finish(at(2)))
	require.Equal(t, "func m.g(x)\n  b0:\n    return x\n", sb.String())
}

func TestInstrStringUnknownOp(t *testing.T) {
	t.Parallel()
	fn := &ir.Func{Vars: []ir.Var{{Name: "x", Type: "T"}}}
	require.Equal(t, "x:T = op99", ir.InstrString(fn, &ir.Instr{Op: 99, Dst: 0}))
	require.Equal(t, "op42", ir.InstrString(fn, &ir.Instr{Op: 42, Dst: ir.NoVar}))
}

func TestInstrStringReturnWithoutValue(t *testing.T) {
	t.Parallel()
	b := ir.NewBuilder(&ir.File{}, "h", "h")
	b.Return(ir.None, at(1))
	var sb strings.Builder
	ir.DumpFunc(&sb, b.Finish(at(2)))
	require.Contains(t, sb.String(), "return _\n")
}
