// Package lower holds what the language front ends below it share when they
// lower a syntax tree to IR: positions, line counts and the lowering of
// string escapes and literals common to several languages.
package lower

import (
	"bytes"

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

// Lines counts the lines of a source file; a final newline ends the last
// line rather than starting another.
func Lines(src []byte) int {
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}
