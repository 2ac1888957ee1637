package ir_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
)

func TestConstString(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		c    *ir.Const
		want string
	}{
		{"plain string", ir.Str("abc"), `"abc"`},
		{"string with quotes and newline", ir.Str("a\"b\nc"), `"a\"b\nc"`},
		{"empty string", ir.Str(""), `""`},
		{"zero", ir.Int(0), "0"},
		{"negative int", ir.Int(-42), "-42"},
		{"max int", ir.Int(math.MaxInt64), "9223372036854775807"},
		{"float", ir.Float(1.5), "1.5"},
		{"float exponent", ir.Float(1e21), "1e+21"},
		{"true", ir.Bool(true), "true"},
		{"false", ir.Bool(false), "false"},
		{"null", ir.Null(), "null"},
		{"unknown kind", &ir.Const{Kind: 99}, "?"},
		{"zero kind", &ir.Const{}, "?"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tc.c.String())
		})
	}
}

func TestConstConstructorsAndKinds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		c            *ir.Const
		kind         ir.ConstKind
		isStr, isNum bool
		checkPayload func(*testing.T, *ir.Const)
	}{
		{"Str", ir.Str("x"), ir.ConstStr, true, false, func(t *testing.T, c *ir.Const) { require.Equal(t, "x", c.Str) }},
		{"Int", ir.Int(7), ir.ConstInt, false, true, func(t *testing.T, c *ir.Const) { require.Equal(t, int64(7), c.Int) }},
		{"Float", ir.Float(2.25), ir.ConstFloat, false, true, func(t *testing.T, c *ir.Const) { require.InDelta(t, 2.25, c.Float, 0) }},
		{"Bool", ir.Bool(true), ir.ConstBool, false, false, func(t *testing.T, c *ir.Const) { require.True(t, c.Bool) }},
		{"Null", ir.Null(), ir.ConstNull, false, false, func(t *testing.T, c *ir.Const) { require.Empty(t, c.Str) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.kind, tc.c.Kind)
			require.Equal(t, tc.isStr, tc.c.IsStr())
			require.Equal(t, tc.isNum, tc.c.IsNumber())
			tc.checkPayload(t, tc.c)
		})
	}
}

func TestConstPredicatesOnNil(t *testing.T) {
	t.Parallel()
	var c *ir.Const
	require.False(t, c.IsStr())
	require.False(t, c.IsNumber())
}

func TestValueClassification(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                   string
		v                      ir.Value
		isVar, isConst, isNone bool
	}{
		{"None", ir.None, false, false, true},
		{"zero Value is variable 0", ir.Value{}, true, false, false},
		{"first variable", ir.V(0), true, false, false},
		{"later variable", ir.V(12), true, false, false},
		{"NoVar wrapped", ir.V(ir.NoVar), false, false, true},
		{"string constant", ir.C(ir.Str("s")), false, true, false},
		{"null constant", ir.C(ir.Null()), false, true, false},
		{"nil constant is none", ir.C(nil), false, false, true},
		{"constant and variable both set", ir.Value{Var: 3, Const: ir.Int(1)}, false, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.isVar, tc.v.IsVar(), "IsVar")
			require.Equal(t, tc.isConst, tc.v.IsConst(), "IsConst")
			require.Equal(t, tc.isNone, tc.v.IsNone(), "IsNone")
		})
	}
}

func TestOpString(t *testing.T) {
	t.Parallel()
	want := map[ir.Op]string{
		ir.OpAssign: "assign", ir.OpUnary: "unary", ir.OpBinary: "binary", ir.OpCall: "call",
		ir.OpLoadField: "loadfield", ir.OpStoreField: "storefield", ir.OpLoadIndex: "loadindex",
		ir.OpStoreIndex: "storeindex", ir.OpLoadGlobal: "loadglobal", ir.OpStoreGlobal: "storeglobal",
		ir.OpMakeList: "makelist", ir.OpMakeMap: "makemap", ir.OpFunc: "func", ir.OpCast: "cast",
		ir.OpCatch: "catch", ir.OpOpaque: "opaque",
		0:   "",
		17:  "op17",
		200: "op200",
	}
	for op, s := range want {
		require.Equal(t, s, op.String(), "op %d", uint8(op))
	}
}

func TestFileLine(t *testing.T) {
	t.Parallel()
	f := &ir.File{Src: []byte("first\nsecond line\n\nfourth\r\nlast")}
	cases := []struct {
		n    int
		want string
	}{
		{-1, ""},
		{0, ""},
		{1, "first"},
		{2, "second line"},
		{3, ""},
		{4, "fourth\r"},
		{5, "last"},
		{6, ""},
		{100, ""},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, f.Line(tc.n), "line %d", tc.n)
	}
}

func TestFileLineEdgeSources(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		src  string
		n    int
		want string
	}{
		{"empty source first line", "", 1, ""},
		{"empty source second line", "", 2, ""},
		{"trailing newline makes an empty last line", "a\n", 2, ""},
		{"line after trailing newline does not exist", "a\n", 3, ""},
		{"single line without newline", "only", 1, "only"},
		{"only newlines", "\n\n\n", 3, ""},
		{"multibyte text", "é\nñandú", 2, "ñandú"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &ir.File{Src: []byte(tc.src)}
			require.Equal(t, tc.want, f.Line(tc.n))
		})
	}
}

func TestFileText(t *testing.T) {
	t.Parallel()
	f := &ir.File{Src: []byte("hello world")}
	cases := []struct {
		name string
		p    ir.Pos
		want string
	}{
		{"whole", ir.Pos{Start: 0, End: 11}, "hello world"},
		{"middle", ir.Pos{Start: 6, End: 9}, "wor"},
		{"empty range", ir.Pos{Start: 4, End: 4}, ""},
		{"end past source", ir.Pos{Start: 0, End: 12}, ""},
		{"start after end", ir.Pos{Start: 5, End: 3}, ""},
		{"zero position", ir.Pos{}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, f.Text(tc.p))
		})
	}
}

func TestFuncValueString(t *testing.T) {
	t.Parallel()
	fn := &ir.Func{Vars: []ir.Var{{Name: "x"}, {Name: ""}, {Name: "$t1"}}}
	cases := []struct {
		name string
		v    ir.Value
		want string
	}{
		{"named variable", ir.V(0), "x"},
		{"unnamed variable", ir.V(1), "v1"},
		{"temporary", ir.V(2), "$t1"},
		{"variable out of range", ir.V(9), "v9"},
		{"none", ir.None, "_"},
		{"string constant", ir.C(ir.Str("q")), `"q"`},
		{"int constant", ir.C(ir.Int(3)), "3"},
		{"constant wins over variable", ir.Value{Var: 0, Const: ir.Bool(false)}, "false"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, fn.ValueString(tc.v))
		})
	}
}
