package ir_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
)

// validFunc returns a small well-formed function with two variables and
// three blocks: b0 branches to b1 and b2, both return.
func validFunc() *ir.Func {
	b := ir.NewBuilder(&ir.File{}, "f", "m.f")
	x := b.Param("x", "", nil)
	y := b.Var("y", "")
	then, els := b.NewBlock(), b.NewBlock()
	b.Assign(y, ir.V(x), at(1))
	b.If(ir.V(y), then, els, at(2))
	b.SetBlock(then)
	b.Return(ir.V(y), at(3))
	b.SetBlock(els)
	b.Return(ir.None, at(4))
	return b.Finish(at(5))
}

func TestValidateAcceptsWellFormed(t *testing.T) {
	t.Parallel()
	require.NoError(t, ir.Validate(validFunc()))
}

func TestValidateRejects(t *testing.T) {
	t.Parallel()
	const missing = ir.VarID(50)
	instr := func(in ir.Instr) func(*ir.Func) {
		return func(fn *ir.Func) { fn.Blocks[1].Instrs = append(fn.Blocks[1].Instrs, in) }
	}
	cases := []struct {
		name   string
		mutate func(*ir.Func)
		msg    string
	}{
		{"no blocks", func(fn *ir.Func) { fn.Blocks = nil }, "m.f: no blocks"},
		{"block id mismatch", func(fn *ir.Func) { fn.Blocks[2].ID = 7 }, "block 2 has id 7"},
		{"unterminated block", func(fn *ir.Func) { fn.Blocks[1].Term = 0 }, "block 1 not terminated"},
		{"jump without target", func(fn *ir.Func) { fn.Blocks[1].Term, fn.Blocks[1].Succs = ir.TermJump, nil }, "block 1 has 0 successors"},
		{"if with one target", func(fn *ir.Func) { fn.Blocks[0].Succs = fn.Blocks[0].Succs[:1] }, "block 0 has 1 successors"},
		{"jump to missing block", func(fn *ir.Func) { fn.Blocks[0].Succs[1] = 9 }, "block 0 jumps to missing block 9"},
		{"negative successor", func(fn *ir.Func) { fn.Blocks[0].Succs[0] = -1 }, "jumps to missing block -1"},
		{"missing handler", func(fn *ir.Func) { fn.Blocks[1].Handlers = []int{3} }, "block 1 jumps to missing block 3"},
		{"condition on missing variable", func(fn *ir.Func) { fn.Blocks[0].Cond = ir.V(missing) }, "block 0 terminator uses a missing variable"},
		{"return of missing variable", func(fn *ir.Func) { fn.Blocks[1].Val = ir.V(missing) }, "block 1 terminator uses a missing variable"},
		{"no opcode", instr(ir.Instr{Dst: ir.NoVar}), "b1[0] has no opcode"},
		{"defines missing variable", instr(ir.Instr{Op: ir.OpAssign, Dst: missing, Args: []ir.Value{ir.C(ir.Int(1))}}), "b1[0] defines missing variable 50"},
		{"defines below NoVar", instr(ir.Instr{Op: ir.OpAssign, Dst: -2, Args: []ir.Value{ir.C(ir.Int(1))}}), "defines missing variable -2"},
		{"uses missing variable", instr(ir.Instr{Op: ir.OpAssign, Dst: 0, Args: []ir.Value{ir.V(missing)}}), "b1[0] uses a missing variable"},
		{"call without target", instr(ir.Instr{Op: ir.OpCall, Dst: ir.NoVar}), "b1[0] call without target"},
		{"call argument missing", instr(ir.Instr{Op: ir.OpCall, Dst: ir.NoVar, Call: &ir.Call{Kind: ir.CallFunc, Name: "g", Recv: ir.None, Args: []ir.Value{ir.V(missing)}}}), "b1[0] call uses a missing variable"},
		{"call receiver missing", instr(ir.Instr{Op: ir.OpCall, Dst: ir.NoVar, Call: &ir.Call{Kind: ir.CallMethod, Name: "g", Recv: ir.V(missing)}}), "b1[0] call receiver is a missing variable"},
		{"closure without function", instr(ir.Instr{Op: ir.OpFunc, Dst: 0}), "b1[0] closure without function"},
		{"assign arity", instr(ir.Instr{Op: ir.OpAssign, Dst: 0}), "b1[0] assign needs 1 operand"},
		{"unary arity", instr(ir.Instr{Op: ir.OpUnary, Dst: 0, Args: []ir.Value{ir.V(0), ir.V(1)}}), "unary needs 1 operand"},
		{"cast arity", instr(ir.Instr{Op: ir.OpCast, Dst: 0}), "cast needs 1 operand"},
		{"storeglobal arity", instr(ir.Instr{Op: ir.OpStoreGlobal, Dst: ir.NoVar}), "storeglobal needs 1 operand"},
		{"binary arity", instr(ir.Instr{Op: ir.OpBinary, Dst: 0, Args: []ir.Value{ir.V(0)}}), "binary needs 2 operands"},
		{"storefield arity", instr(ir.Instr{Op: ir.OpStoreField, Dst: ir.NoVar, Args: []ir.Value{ir.V(0)}}), "storefield needs 2 operands"},
		{"loadindex arity", instr(ir.Instr{Op: ir.OpLoadIndex, Dst: 0, Args: []ir.Value{ir.V(0)}}), "loadindex needs 2 operands"},
		{"storeindex arity", instr(ir.Instr{Op: ir.OpStoreIndex, Dst: ir.NoVar, Args: []ir.Value{ir.V(0), ir.None}}), "storeindex needs 3 operands"},
		{"loadfield arity", instr(ir.Instr{Op: ir.OpLoadField, Dst: 0, Args: []ir.Value{ir.V(0), ir.V(1)}}), "loadfield needs 1 operand"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fn := validFunc()
			tc.mutate(fn)
			err := ir.Validate(fn)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.msg)
			require.Contains(t, err.Error(), "m.f")
		})
	}
}

func TestValidateAcceptsFlexibleArities(t *testing.T) {
	t.Parallel()
	// Instructions whose operand count is free: lists, maps, opaque values,
	// loads of globals and catch bindings.
	for _, in := range []ir.Instr{
		{Op: ir.OpMakeList, Dst: 0},
		{Op: ir.OpMakeList, Dst: 0, Args: []ir.Value{ir.V(0), ir.V(1), ir.C(ir.Int(1))}},
		{Op: ir.OpMakeMap, Dst: 0, Args: []ir.Value{ir.C(ir.Str("k")), ir.V(1)}},
		{Op: ir.OpOpaque, Dst: 0},
		{Op: ir.OpLoadGlobal, Dst: 0, Name: "g"},
		{Op: ir.OpCatch, Dst: 1, Name: "E"},
		{Op: ir.OpLoadIndex, Dst: 0, Args: []ir.Value{ir.V(1), ir.None}},
		{Op: ir.OpStoreIndex, Dst: ir.NoVar, Args: []ir.Value{ir.V(1), ir.None, ir.V(0)}},
		{Op: ir.OpCall, Dst: ir.NoVar, Call: &ir.Call{Kind: ir.CallFunc, Name: "g", Recv: ir.None}},
		{Op: 77, Dst: ir.NoVar},
	} {
		fn := validFunc()
		fn.Blocks[1].Instrs = append(fn.Blocks[1].Instrs, in)
		require.NoError(t, ir.Validate(fn), "%s", in.Op)
	}
}

func TestValidateTerminatorSuccessorCounts(t *testing.T) {
	t.Parallel()
	// Return, throw and end may have any successors in range (a throw lists
	// its handlers).
	for _, term := range []ir.TermKind{ir.TermReturn, ir.TermThrow, ir.TermEnd} {
		fn := validFunc()
		fn.Blocks[1].Term = term
		fn.Blocks[1].Succs = []int{0, 2}
		require.NoError(t, ir.Validate(fn), "term %d", term)
	}
}

func TestValidateFile(t *testing.T) {
	t.Parallel()
	broken := func() *ir.Func {
		fn := validFunc()
		fn.QName = "m.broken"
		fn.Blocks[0].Term = 0
		return fn
	}
	cases := []struct {
		name string
		f    *ir.File
		err  string
	}{
		{"empty file", &ir.File{}, ""},
		{"valid functions and init", &ir.File{Funcs: []*ir.Func{validFunc(), validFunc()}, Init: validFunc()}, ""},
		{"broken function", &ir.File{Funcs: []*ir.Func{validFunc(), broken()}}, "m.broken: block 0 not terminated"},
		{"broken init", &ir.File{Funcs: []*ir.Func{validFunc()}, Init: broken()}, "m.broken"},
		{"first error wins", &ir.File{Funcs: []*ir.Func{broken(), {QName: "m.empty"}}}, "m.broken"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := ir.ValidateFile(tc.f)
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
}
