package lower_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

func TestLines(t *testing.T) {
	t.Parallel()
	cases := map[string]int{
		"":           0,
		"a":          1,
		"a\n":        1,
		"a\nb":       2,
		"a\nb\n":     2,
		"\n":         1,
		"\n\n":       2,
		"a\r\nb\r\n": 2,
	}
	for src, want := range cases {
		require.Equal(t, want, lower.Lines([]byte(src)), "%q", src)
	}
}

func TestControlEscape(t *testing.T) {
	t.Parallel()
	for letter, want := range map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'v': '\v', 'f': '\f'} {
		got, ok := lower.ControlEscape(letter)
		require.True(t, ok, "%c", letter)
		require.Equal(t, want, got, "%c", letter)
	}
	for _, letter := range []byte{'a', 'x', 'u', '0', '\\', '"', 'N'} {
		got, ok := lower.ControlEscape(letter)
		require.False(t, ok, "%c", letter)
		require.Zero(t, got)
	}
}

func TestPositions(t *testing.T) {
	t.Parallel()
	src := "x = 1\ndef f():\n    return 2\n"
	p := syntax.NewParser(syntax.Limits{})
	defer p.Close()
	root, _, err := p.Parse(context.Background(), syntax.Python, []byte(src))
	require.NoError(t, err)
	fn := root.FirstOfType("function_definition")
	require.NotNil(t, fn)

	pos := lower.Pos(fn)
	require.Equal(t, ir.Pos{Line: 2, EndLine: 3, Start: fn.Start, End: fn.End}, pos)
	require.Equal(t, "def f():\n    return 2", src[pos.Start:pos.End])

	end := lower.EndPos(fn)
	require.Equal(t, ir.Pos{Line: 3, EndLine: 3, Start: fn.End, End: fn.End}, end, "an empty position where the body ends")

	require.Equal(t, ir.Pos{}, lower.Pos(nil))
	require.Equal(t, ir.Pos{}, lower.EndPos(nil))
}

func TestInterpolation(t *testing.T) {
	t.Parallel()
	at := ir.Pos{Line: 1, EndLine: 1}
	cases := []struct {
		name  string
		parts []string // "$x" is the value of variable x, anything else text
		want  string   // the dump of the instructions, then "=> " and the result
	}{
		{"empty", nil, "=> \"\""},
		{"text only", []string{"a", "b"}, "=> \"ab\""},
		{"value only", []string{"$x"}, "$t1:String = \"\" + x\n=> $t1"},
		{"text then value", []string{"pre ", "$x"}, "$t1:String = \"pre \" + x\n=> $t1"},
		{"value then text", []string{"$x", " post"}, "$t1:String = \"\" + x\n$t2:String = $t1 + \" post\"\n=> $t2"},
		{"two values", []string{"$x", "$y"}, "$t1:String = \"\" + x\n$t2:String = $t1 + y\n=> $t2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := ir.NewBuilder(&ir.File{}, "f", "f")
			s := lower.NewInterpolation(b)
			for _, part := range tc.parts {
				if name, ok := strings.CutPrefix(part, "$"); ok {
					s.Value(at, func() ir.Value { return ir.V(b.Var(name, "")) })
				} else {
					s.Text(part)
				}
			}
			v := s.Done(at)
			fn := b.Fn
			var lines []string
			for _, in := range fn.Blocks[0].Instrs {
				lines = append(lines, ir.InstrString(fn, &in))
			}
			lines = append(lines, "=> "+fn.ValueString(v))
			require.Equal(t, tc.want, strings.Join(lines, "\n"))
		})
	}
}
