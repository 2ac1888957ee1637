package ir_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
)

func at(line int32) ir.Pos { return ir.Pos{Line: line, EndLine: line} }

func newBuilder() *ir.Builder {
	f := &ir.File{Path: "a.py", Lang: "python"}
	return ir.NewBuilder(f, "f", "m.f")
}

func TestNewBuilderStartsWithReachableEntry(t *testing.T) {
	t.Parallel()
	f := &ir.File{Path: "x.java"}
	b := ir.NewBuilder(f, "run", "app.X.run")
	require.Equal(t, "run", b.Fn.Name)
	require.Equal(t, "app.X.run", b.Fn.QName)
	require.Same(t, f, b.Fn.File)
	require.Equal(t, ir.NoVar, b.Fn.This)
	require.Len(t, b.Fn.Blocks, 1)
	require.Equal(t, 0, b.Current())
	require.True(t, b.Reachable())
	entry := b.Fn.Blocks[0]
	require.True(t, entry.Cond.IsNone())
	require.True(t, entry.Val.IsNone())
	require.Empty(t, entry.Handlers)
}

func TestBuilderVariables(t *testing.T) {
	t.Parallel()
	b := newBuilder()

	x := b.Var("x", "")
	require.Equal(t, ir.VarID(0), x)
	require.Equal(t, x, b.Var("x", "int"), "same name gives the same variable")
	require.Equal(t, "int", b.Fn.Vars[x].Type, "a later type fills an unknown one")
	require.Equal(t, x, b.Var("x", "str"))
	require.Equal(t, "int", b.Fn.Vars[x].Type, "a known type is not replaced by Var")

	shadow := b.Declare("x", "str")
	require.NotEqual(t, x, shadow)
	got, ok := b.Lookup("x")
	require.True(t, ok)
	require.Equal(t, shadow, got, "Declare shadows the earlier variable")
	require.Equal(t, "str", b.Fn.Vars[shadow].Type)

	_, ok = b.Lookup("missing")
	require.False(t, ok)

	c := b.Captured("outer", "list")
	require.True(t, b.Fn.Vars[c].Captured)
	require.Equal(t, "list", b.Fn.Vars[c].Type)
	require.Equal(t, c, b.Captured("outer", ""), "a captured name is one variable")

	b.SetType(c, "dict")
	require.Equal(t, "dict", b.Fn.Vars[c].Type, "SetType replaces a known type")
	b.SetType(c, "")
	require.Equal(t, "dict", b.Fn.Vars[c].Type, "an empty type is ignored")
	b.SetType(ir.NoVar, "int") // must not panic
}

func TestBuilderTemporariesAreNumberedFromOne(t *testing.T) {
	t.Parallel()
	b := newBuilder()
	first := b.Temp("int")
	second := b.Temp("")
	require.Equal(t, "$t1", b.Fn.Vars[first].Name)
	require.Equal(t, "int", b.Fn.Vars[first].Type)
	require.Equal(t, "$t2", b.Fn.Vars[second].Name)
	_, ok := b.Lookup("$t1")
	require.False(t, ok, "temporaries are not found by name")

	var last ir.VarID
	for range 700 {
		last = b.Temp("")
	}
	require.Equal(t, "$t702", b.Fn.Vars[last].Name, "names beyond the precomputed table are formatted")
	require.Equal(t, "$t511", b.Fn.Vars[first+510].Name)
	require.Equal(t, "$t512", b.Fn.Vars[first+511].Name)
}

func TestBuilderParamsAndReceiver(t *testing.T) {
	t.Parallel()
	b := newBuilder()
	self := b.This("self", "app.C")
	ann := []ir.Annotation{{Name: "RequestParam", Args: map[string]string{"value": "id"}}}
	p := b.Param("id", "str", ann)
	q := b.Param("id", "", nil)
	require.Equal(t, self, b.Fn.This)
	require.Len(t, b.Fn.Params, 2)
	require.Equal(t, p, b.Fn.Params[0].Var)
	require.Equal(t, ann, b.Fn.Params[0].Annotations)
	require.Equal(t, q, b.Fn.Params[1].Var)
	require.NotEqual(t, p, q, "each parameter is a fresh variable")
	got, _ := b.Lookup("id")
	require.Equal(t, q, got)
}

func TestBuilderTypedHelpersEmitInstructions(t *testing.T) {
	t.Parallel()
	b := newBuilder()
	x := b.Var("x", "")
	fnLit := &ir.Func{Name: "<lambda>", QName: "m.f$lambda1"}
	call := &ir.Call{Kind: ir.CallFunc, Name: "g", Recv: ir.None, Args: []ir.Value{ir.V(x)}}

	b.Assign(x, ir.C(ir.Int(1)), at(1))
	bin := b.Binary("+", ir.V(x), ir.C(ir.Int(2)), at(2))
	un := b.Unary("-", bin, at(3))
	res := b.Call(call, "str", at(4))
	lf := b.LoadField(ir.V(x), "name", "str", at(5))
	b.StoreField(ir.V(x), "name", un, at(6))
	li := b.LoadIndex(ir.V(x), ir.None, "", at(7))
	b.StoreIndex(ir.V(x), ir.C(ir.Int(0)), li, at(8))
	lg := b.LoadGlobal("os.environ", "dict", at(9))
	b.StoreGlobal("app.X", lg, at(10))
	ml := b.MakeList("list", []ir.Value{res, lf}, at(11))
	mm := b.MakeMap("dict", []ir.Value{ir.C(ir.Str("k")), ml}, at(12))
	cl := b.Closure(fnLit, at(13))
	ca := b.Cast("int", mm, at(14))
	b.Catch(x, "ValueError|KeyError", at(15))
	op := b.Opaque([]ir.Value{cl, ca}, at(16))

	fn := b.Finish(at(17))
	require.NoError(t, ir.Validate(fn))
	ins := fn.Blocks[0].Instrs
	require.Len(t, ins, 16)

	type want struct {
		op   ir.Op
		dst  ir.Value
		name string
		nArg int
	}
	exp := []want{
		{ir.OpAssign, ir.V(x), "", 1},
		{ir.OpBinary, bin, "+", 2},
		{ir.OpUnary, un, "-", 1},
		{ir.OpCall, res, "", 0},
		{ir.OpLoadField, lf, "name", 1},
		{ir.OpStoreField, ir.None, "name", 2},
		{ir.OpLoadIndex, li, "", 2},
		{ir.OpStoreIndex, ir.None, "", 3},
		{ir.OpLoadGlobal, lg, "os.environ", 0},
		{ir.OpStoreGlobal, ir.None, "app.X", 1},
		{ir.OpMakeList, ml, "list", 2},
		{ir.OpMakeMap, mm, "dict", 2},
		{ir.OpFunc, cl, "", 0},
		{ir.OpCast, ca, "int", 1},
		{ir.OpCatch, ir.V(x), "ValueError|KeyError", 0},
		{ir.OpOpaque, op, "", 2},
	}
	for i, w := range exp {
		in := ins[i]
		require.Equal(t, w.op, in.Op, "instr %d", i)
		require.Equal(t, w.dst.Var, in.Dst, "instr %d dst", i)
		require.Equal(t, w.name, in.Name, "instr %d name", i)
		require.Len(t, in.Args, w.nArg, "instr %d args", i)
		require.Equal(t, int32(i+1), in.Pos.Line, "instr %d keeps its position", i)
	}
	require.Same(t, call, ins[3].Call)
	require.Same(t, fnLit, ins[12].Fn)
	require.True(t, ins[6].Args[1].IsNone(), "some-element load keeps a None index")

	require.Equal(t, "str", fn.Vars[res.Var].Type, "Call types its result")
	require.Equal(t, "str", fn.Vars[lf.Var].Type)
	require.Equal(t, "dict", fn.Vars[lg.Var].Type)
	require.Equal(t, "list", fn.Vars[ml.Var].Type)
	require.Equal(t, "int", fn.Vars[ca.Var].Type)
	require.Empty(t, fn.Vars[bin.Var].Type)
}

func TestBuilderTerminatorsCloseTheBlock(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		term func(b *ir.Builder, v ir.Value)
		kind ir.TermKind
		succ []int
	}{
		{"jump", func(b *ir.Builder, _ ir.Value) { b.Jump(0, at(9)) }, ir.TermJump, []int{0}},
		{"if", func(b *ir.Builder, v ir.Value) { b.If(v, 0, 0, at(9)) }, ir.TermIf, []int{0, 0}},
		{"return", func(b *ir.Builder, v ir.Value) { b.Return(v, at(9)) }, ir.TermReturn, nil},
		{"throw outside try", func(b *ir.Builder, v ir.Value) { b.Throw(v, at(9)) }, ir.TermThrow, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBuilder()
			v := ir.V(b.Var("v", ""))
			tc.term(b, v)
			require.False(t, b.Reachable())
			require.Equal(t, -1, b.Current())
			blk := b.Fn.Blocks[0]
			require.Equal(t, tc.kind, blk.Term)
			require.Equal(t, tc.succ, blk.Succs)
			require.Equal(t, int32(9), blk.TermPos.Line)
			switch tc.kind {
			case ir.TermIf:
				require.Equal(t, v, blk.Cond)
			case ir.TermReturn, ir.TermThrow:
				require.Equal(t, v, blk.Val)
			}

			// Code after a terminator lands in a fresh, unreachable block.
			b.Assign(v.Var, ir.C(ir.Int(1)), at(10))
			require.True(t, b.Reachable())
			require.Equal(t, 1, b.Current())
			fn := b.Finish(at(11))
			require.Len(t, fn.Blocks, 2)
			require.Equal(t, ir.TermEnd, fn.Blocks[1].Term)
			require.NoError(t, ir.Validate(fn))
		})
	}
}

func TestBuilderTerminatorWhenUnreachableOpensBlock(t *testing.T) {
	t.Parallel()
	b := newBuilder()
	b.Return(ir.None, at(1))
	b.Return(ir.C(ir.Int(2)), at(2))
	fn := b.Finish(at(3))
	require.Len(t, fn.Blocks, 2)
	require.Equal(t, ir.TermReturn, fn.Blocks[1].Term)
	require.Equal(t, int64(2), fn.Blocks[1].Val.Const.Int)
}

func TestBuilderBlocksAndFinish(t *testing.T) {
	t.Parallel()
	b := newBuilder()
	then := b.NewBlock()
	els := b.NewBlock()
	join := b.NewBlock()
	require.Equal(t, 0, b.Current(), "NewBlock does not switch")
	c := b.Var("c", "bool")
	b.If(ir.V(c), then, els, at(1))

	b.SetBlock(then)
	require.Equal(t, then, b.Current())
	b.Jump(join, at(2))
	b.SetBlock(els)
	b.Jump(join, at(3))
	b.SetBlock(join)
	b.Return(ir.V(c), at(4))
	orphan := b.NewBlock() // never terminated explicitly

	fn := b.Finish(at(5))
	require.Equal(t, ir.TermEnd, fn.Blocks[orphan].Term, "Finish ends every open block")
	require.Equal(t, []int{then, els}, fn.Blocks[0].Succs)
	require.NoError(t, ir.Validate(fn))

	again := b.Finish(at(6))
	require.Same(t, fn, again)
	require.Len(t, again.Blocks, 5, "Finish on an unreachable point adds nothing")
}

func TestBuilderTryHandlers(t *testing.T) {
	t.Parallel()
	b := newBuilder()
	x := b.Var("x", "")
	b.Assign(x, ir.C(ir.Int(0)), at(1))
	catch := b.NewBlock()
	require.Empty(t, b.Fn.Blocks[catch].Handlers, "the catch entry itself is not covered")

	b.PushHandlers([]int{catch}, at(2))
	body := b.Current()
	require.NotEqual(t, 0, body, "the try body starts in a new block")
	require.Equal(t, ir.TermJump, b.Fn.Blocks[0].Term)
	require.Equal(t, []int{body}, b.Fn.Blocks[0].Succs)
	require.Equal(t, []int{catch}, b.Fn.Blocks[body].Handlers)
	require.Empty(t, b.Fn.Blocks[0].Handlers)

	inner := b.NewBlock()
	require.Equal(t, []int{catch}, b.Fn.Blocks[inner].Handlers, "blocks made inside try are covered")
	b.Throw(ir.V(x), at(3))
	require.Equal(t, []int{catch}, b.Fn.Blocks[body].Succs, "a throw goes to the handlers")

	b.SetBlock(inner)
	b.PopHandlers(at(4))
	after := b.Current()
	require.Empty(t, b.Fn.Blocks[after].Handlers, "code after the try is not covered")
	require.Equal(t, []int{after}, b.Fn.Blocks[inner].Succs)

	b.SetBlock(catch)
	b.Catch(x, "Exception", at(5))
	b.Jump(after, at(6))
	fn := b.Finish(at(7))
	require.NoError(t, ir.Validate(fn))
}

func TestBuilderNestedTryUsesInnermostHandlers(t *testing.T) {
	t.Parallel()
	b := newBuilder()
	outer := b.NewBlock()
	inner := b.NewBlock()
	b.PushHandlers([]int{outer}, at(1))
	b.PushHandlers([]int{inner}, at(2))
	require.Equal(t, []int{inner}, b.Fn.Blocks[b.Current()].Handlers)
	b.Throw(ir.C(ir.Str("e")), at(3))
	var throwBlk *ir.Block
	for _, blk := range b.Fn.Blocks {
		if blk.Term == ir.TermThrow {
			throwBlk = blk
		}
	}
	require.NotNil(t, throwBlk)
	require.Equal(t, []int{inner}, throwBlk.Succs)

	// Unreachable point: PopHandlers does not open a block.
	n := len(b.Fn.Blocks)
	b.PopHandlers(at(4))
	require.Len(t, b.Fn.Blocks, n)
	require.False(t, b.Reachable())
	nb := b.NewBlock()
	require.Equal(t, []int{outer}, b.Fn.Blocks[nb].Handlers, "after the inner pop the outer try covers")
	b.PopHandlers(at(5))
	nb2 := b.NewBlock()
	require.Empty(t, b.Fn.Blocks[nb2].Handlers)
	require.NoError(t, ir.Validate(b.Finish(at(6))))
}

func TestBuilderPushHandlersWhenUnreachable(t *testing.T) {
	t.Parallel()
	b := newBuilder()
	h := b.NewBlock()
	b.Return(ir.None, at(1))
	n := len(b.Fn.Blocks)
	b.PushHandlers([]int{h}, at(2))
	require.Len(t, b.Fn.Blocks, n, "no split when the point is unreachable")
	b.Assign(b.Var("x", ""), ir.C(ir.Int(1)), at(3))
	require.Equal(t, []int{h}, b.Fn.Blocks[b.Current()].Handlers, "the block opened for the next instruction is covered")
}

func TestBuilderBreakAndContinue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		loops    [][3]any // label, breakTo, contTo
		brk      bool
		label    string
		wantTerm ir.TermKind
		wantTo   int
	}{
		{"break innermost", [][3]any{{"", 10, 11}, {"", 20, 21}}, true, "", ir.TermJump, 20},
		{"continue innermost", [][3]any{{"", 10, 11}, {"", 20, 21}}, false, "", ir.TermJump, 21},
		{"break labelled outer", [][3]any{{"outer", 10, 11}, {"", 20, 21}}, true, "outer", ir.TermJump, 10},
		{"continue labelled outer", [][3]any{{"outer", 10, 11}, {"inner", 20, 21}}, false, "outer", ir.TermJump, 11},
		{"continue skips a switch", [][3]any{{"", 10, 11}, {"", 20, -1}}, false, "", ir.TermJump, 11},
		{"break leaves a switch", [][3]any{{"", 10, 11}, {"", 20, -1}}, true, "", ir.TermJump, 20},
		{"break outside loops", nil, true, "", ir.TermEnd, -1},
		{"continue outside loops", nil, false, "", ir.TermEnd, -1},
		{"break unknown label", [][3]any{{"a", 10, 11}}, true, "b", ir.TermEnd, -1},
		{"continue only in a switch", [][3]any{{"", 20, -1}}, false, "", ir.TermEnd, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBuilder()
			for _, l := range tc.loops {
				b.PushLoop(l[0].(string), l[1].(int), l[2].(int))
			}
			if tc.brk {
				b.Break(tc.label, at(1))
			} else {
				b.Continue(tc.label, at(1))
			}
			require.False(t, b.Reachable())
			blk := b.Fn.Blocks[0]
			require.Equal(t, tc.wantTerm, blk.Term)
			if tc.wantTerm == ir.TermJump {
				require.Equal(t, []int{tc.wantTo}, blk.Succs)
			} else {
				require.Empty(t, blk.Succs)
			}
		})
	}
}

func TestBuilderPopLoop(t *testing.T) {
	t.Parallel()
	b := newBuilder()
	outerBreak := b.NewBlock()
	innerBreak := b.NewBlock()
	b.PushLoop("", outerBreak, 0)
	b.PushLoop("", innerBreak, 0)
	b.PopLoop()
	b.Break("", at(1))
	require.Equal(t, []int{outerBreak}, b.Fn.Blocks[0].Succs)
	require.NoError(t, ir.Validate(b.Finish(at(2))))
}

// A while loop built the way front ends build it validates and has the
// expected back edge.
func TestBuilderLoopShape(t *testing.T) {
	t.Parallel()
	b := newBuilder()
	i := b.Var("i", "int")
	b.Assign(i, ir.C(ir.Int(0)), at(1))
	head, body, exit := b.NewBlock(), b.NewBlock(), b.NewBlock()
	b.Jump(head, at(1))
	b.SetBlock(head)
	cond := b.Binary("<", ir.V(i), ir.C(ir.Int(10)), at(2))
	b.If(cond, body, exit, at(2))
	b.SetBlock(body)
	b.PushLoop("", exit, head)
	next := b.Binary("+", ir.V(i), ir.C(ir.Int(1)), at(3))
	b.Assign(i, next, at(3))
	b.Continue("", at(4))
	b.PopLoop()
	b.SetBlock(exit)
	b.Return(ir.V(i), at(5))
	fn := b.Finish(at(6))
	require.NoError(t, ir.Validate(fn))
	require.Equal(t, []int{head}, fn.Blocks[body].Succs, "continue is the back edge")
	require.Equal(t, []int{body, exit}, fn.Blocks[head].Succs)
}

func TestBuilderLoopBody(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		body     func(b *ir.Builder)
		wantBody []int // successors of the body's first block
	}{
		{"falls through to continue", func(b *ir.Builder) { b.Assign(b.Var("x", ""), ir.C(ir.Int(1)), at(2)) }, []int{1}},
		{"break leaves the loop", func(b *ir.Builder) { b.Break("", at(2)) }, []int{2}},
		{"continue restarts it", func(b *ir.Builder) { b.Continue("", at(2)) }, []int{1}},
		{"labelled break", func(b *ir.Builder) { b.Break("outer", at(2)) }, []int{2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBuilder()
			head, exit := b.NewBlock(), b.NewBlock()
			b.Jump(head, at(1))
			b.SetBlock(head)
			body := b.Current()
			b.LoopBody("outer", exit, head, at(3), func() { tc.body(b) })
			require.False(t, b.Reachable(), "the body ends in a jump")
			fn := b.Finish(at(4))
			require.NoError(t, ir.Validate(fn))
			require.Equal(t, ir.TermJump, fn.Blocks[body].Term)
			require.Equal(t, tc.wantBody, fn.Blocks[body].Succs)
		})
	}

	// The loop is unregistered afterwards: a break there has no target.
	b := newBuilder()
	b.LoopBody("", 0, 0, at(1), func() {})
	b.Assign(b.Var("y", ""), ir.C(ir.Int(0)), at(2))
	b.Break("", at(3))
	require.Equal(t, ir.TermEnd, b.Fn.Blocks[len(b.Fn.Blocks)-1].Term)
}

func TestBuilderLabeled(t *testing.T) {
	t.Parallel()
	b := newBuilder()
	x := b.Var("x", "")
	b.Labeled("blk", at(1), func() {
		b.Assign(x, ir.C(ir.Int(1)), at(2))
		then, els := b.NewBlock(), b.NewBlock()
		b.If(ir.V(x), then, els, at(3))
		b.SetBlock(then)
		b.Break("blk", at(4)) // leaves the labelled statement
		b.SetBlock(els)
		b.Assign(x, ir.C(ir.Int(2)), at(5))
	})
	end := b.Current()
	b.Return(ir.V(x), at(6))
	fn := b.Finish(at(7))
	require.NoError(t, ir.Validate(fn))
	var jumpsToEnd int
	for _, blk := range fn.Blocks {
		if blk.Term == ir.TermJump && blk.Succs[0] == end {
			jumpsToEnd++
		}
	}
	require.Equal(t, 2, jumpsToEnd, "the break and the fall-through both reach the end:\n%s", dumpOf(fn))
	require.Equal(t, ir.TermReturn, fn.Blocks[end].Term)

	// A labelled statement ending in a return leaves its end unreachable
	// from the body.
	b2 := newBuilder()
	b2.Labeled("l", at(1), func() { b2.Return(ir.None, at(2)) })
	require.True(t, b2.Reachable(), "code after the statement goes to its end block")
	require.NoError(t, ir.Validate(b2.Finish(at(3))))
}

// Finish clears the terminator operands a block's kind does not use, so a
// block never seems to branch on or return variable 0.
func TestFinishClearsUnusedTerminatorOperands(t *testing.T) {
	t.Parallel()
	b := newBuilder()
	x := b.Var("x", "")
	b.Assign(x, ir.C(ir.Int(1)), at(1))
	nb := b.NewBlock()
	b.Jump(nb, at(2))
	b.SetBlock(nb)
	b.Return(ir.V(x), at(3))
	fn := b.Finish(at(4))
	for _, blk := range fn.Blocks {
		require.True(t, blk.Cond.IsNone(), "b%d cond", blk.ID)
		if blk.Term != ir.TermReturn {
			require.True(t, blk.Val.IsNone(), "b%d val", blk.ID)
		}
	}
	require.Equal(t, ir.V(x), fn.Blocks[nb].Val)
	require.Contains(t, dumpOf(fn), "x = 1\n    jump b1\n  b1:\n    return x")
}

func dumpOf(fn *ir.Func) string {
	var sb strings.Builder
	ir.DumpFunc(&sb, fn)
	return sb.String()
}
