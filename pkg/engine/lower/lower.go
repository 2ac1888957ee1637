// Package lower holds what the language front ends below it share when they
// lower a syntax tree to IR: positions, line counts and the lowering of
// string escapes and literals common to several languages.
package lower

import (
	"bytes"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// Pos is the IR position of a syntax node, the zero position for nil.
func Pos(n *syntax.Node) ir.Pos {
	if n == nil {
		return ir.Pos{}
	}
	return ir.Pos{Line: int32(n.Row + 1), EndLine: int32(n.EndRow + 1), Start: n.Start, End: n.End}
}

// EndPos is the empty position at the end of a node, where a function
// that falls off its body returns; the zero position for nil.
func EndPos(n *syntax.Node) ir.Pos {
	if n == nil {
		return ir.Pos{}
	}
	return ir.Pos{Line: int32(n.EndRow + 1), EndLine: int32(n.EndRow + 1), Start: n.End, End: n.End}
}

// Lines counts the lines of a source file; a final newline ends the last
// line rather than starting another.
func Lines(src []byte) int {
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// ControlEscape decodes the escape letters that stand for the same control
// character in every language lowered here: \n, \t, \r, \v and \f.
func ControlEscape(letter byte) (byte, bool) {
	switch letter {
	case 'n':
		return '\n', true
	case 't':
		return '\t', true
	case 'r':
		return '\r', true
	case 'v':
		return '\v', true
	case 'f':
		return '\f', true
	}
	return 0, false
}

// Interpolation builds the value of a string with interpolated values
// (a JavaScript template, a Ruby double-quoted string): its literal text and
// values joined in order with "+" into String temporaries.
type Interpolation struct {
	b    *ir.Builder
	acc  ir.Value
	have bool
	text strings.Builder
}

// NewInterpolation starts an interpolated string lowered into b.
func NewInterpolation(b *ir.Builder) *Interpolation { return &Interpolation{b: b} }

// Text appends literal text.
func (s *Interpolation) Text(t string) { s.text.WriteString(t) }

// Value appends the value eval lowers at p, after the text before it; a
// string starting with a value starts with "" so that the result is a
// string.
func (s *Interpolation) Value(p ir.Pos, eval func() ir.Value) {
	s.flush(p)
	v := eval()
	if !s.have {
		s.add(ir.C(ir.Str("")), p)
	}
	s.add(v, p)
}

// Done appends the remaining text at p and returns the string's value.
func (s *Interpolation) Done(p ir.Pos) ir.Value {
	s.flush(p)
	if !s.have {
		return ir.C(ir.Str(""))
	}
	return s.acc
}

func (s *Interpolation) add(v ir.Value, p ir.Pos) {
	if !s.have {
		s.acc, s.have = v, true
		return
	}
	s.acc = s.b.Binary("+", s.acc, v, p)
	s.b.SetType(s.acc.Var, "String")
}

func (s *Interpolation) flush(p ir.Pos) {
	if s.text.Len() > 0 {
		s.add(ir.C(ir.Str(s.text.String())), p)
		s.text.Reset()
	}
}
