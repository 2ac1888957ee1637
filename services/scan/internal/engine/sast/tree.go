package sast

import (
	"context"
	"errors"

	sitter "github.com/smacker/go-tree-sitter"
)

// Limits applied to every parsed file.
var (
	errTooDeep     = errors.New("syntax tree too deep")
	errTooManyNode = errors.New("syntax tree too large")
)

// node is a compact, Go-side copy of a tree-sitter node. Copying the tree once
// keeps the analysis free of per-access cgo calls and lets it run after the
// C tree is released.
type node struct {
	typ      string
	field    string
	start    uint32
	end      uint32
	row      int // 0-based start row
	endRow   int
	parent   *node
	children []*node
}

// child returns the first child with the given field name.
func (n *node) child(field string) *node {
	for _, c := range n.children {
		if c.field == field {
			return c
		}
	}
	return nil
}

// childrenByField returns every child with the given field name.
func (n *node) childrenByField(field string) []*node {
	var out []*node
	for _, c := range n.children {
		if c.field == field {
			out = append(out, c)
		}
	}
	return out
}

func (n *node) text(src []byte) string { return string(src[n.start:n.end]) }

// convert copies the named nodes of a tree-sitter tree. It walks with a cursor,
// so deeply nested input cannot exhaust the Go stack, and stops at maxDepth or
// maxNodes. Rows are computed from byte offsets on the Go side to keep the
// number of cgo calls per node low.
func convert(ctx context.Context, root *sitter.Node, src []byte, maxDepth, maxNodes int) (*node, int, error) {
	var starts []uint32 // byte offset of each line start
	starts = append(starts, 0)
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, uint32(i+1))
		}
	}
	rowOf := func(off uint32) int {
		lo, hi := 0, len(starts)
		for lo+1 < hi {
			mid := (lo + hi) / 2
			if starts[mid] <= off {
				lo = mid
			} else {
				hi = mid
			}
		}
		return lo
	}
	endRowOf := func(start, end uint32) int {
		if end > start {
			end--
		}
		return rowOf(end)
	}
	cur := sitter.NewTreeCursor(root)
	defer cur.Close()
	top := &node{typ: root.Type(), start: root.StartByte(), end: root.EndByte()}
	top.row, top.endRow = rowOf(top.start), endRowOf(top.start, top.end)
	stack := []*node{top}
	count := 1
	depth := 0
	if !cur.GoToFirstChild() {
		return top, count, nil
	}
	depth++
	for {
		n := cur.CurrentNode()
		parent := stack[len(stack)-1]
		var gn *node
		if n.IsNamed() {
			count++
			if count > maxNodes {
				return nil, count, errTooManyNode
			}
			if count&0xfff == 0 && ctx.Err() != nil {
				return nil, count, ctx.Err()
			}
			sb, eb := n.StartByte(), n.EndByte()
			gn = &node{typ: n.Type(), field: cur.CurrentFieldName(), start: sb, end: eb, row: rowOf(sb), endRow: endRowOf(sb, eb), parent: parent}
			parent.children = append(parent.children, gn)
		}
		// descend into named and anonymous nodes alike (anonymous nodes may
		// wrap named ones in some grammars' error recovery).
		if cur.GoToFirstChild() {
			if depth >= maxDepth {
				return nil, count, errTooDeep
			}
			if gn != nil {
				stack = append(stack, gn)
			} else {
				stack = append(stack, parent)
			}
			depth++
			continue
		}
		for !cur.GoToNextSibling() {
			if !cur.GoToParent() {
				return top, count, nil
			}
			depth--
			stack = stack[:len(stack)-1]
			if depth == 0 {
				return top, count, nil
			}
		}
	}
}
