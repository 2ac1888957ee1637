package syntax

// #include "walk.h"
import "C"

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"unsafe"

	sitter "github.com/smacker/go-tree-sitter"
)

// The copy runs in two halves. walk.c walks the C tree with a tree cursor and
// writes the kept nodes as flat preorder records into a Go buffer, enforcing
// the depth and node-count bounds; one cgo call fills a whole buffer, where
// reading the tree through the binding took several calls per node (type,
// field, named-ness, offsets, each cursor move) and a node cache map. The Go
// half then builds every Node of the file in one slice and every child list
// as a sub-slice of one backing array, so a file costs a handful of
// allocations instead of two or three per node.

const (
	flagNamed = C.VS_NAMED
	flagPunct = C.VS_PUNCT
)

// errCopy reports a copy that could not start: the tree-sitter runtime is not
// reachable from walk.c, or C memory ran out.
var errCopy = errors.New("syntax tree copy unavailable")

// treeLayout checks, once, that the binding keeps the C tree pointer where
// cTree reads it.
var treeLayout = sync.OnceValue(func() error {
	t := reflect.TypeFor[sitter.BaseTree]()
	if t.NumField() == 0 {
		return fmt.Errorf("%w: sitter.BaseTree has no fields", errCopy)
	}
	f := t.Field(0)
	if f.Offset != 0 || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Name() != "_Ctype_struct_TSTree" {
		return fmt.Errorf("%w: sitter.BaseTree starts with %s %s, not the C tree pointer", errCopy, f.Name, f.Type)
	}
	return nil
})

// cTree returns the binding's C TSTree pointer. The binding does not export
// it; its BaseTree struct holds it as the first field, which treeLayout
// verifies by reflection before the pointer is used, and TestCopyMatchesBinding
// compares the copy with the binding's own node API.
func cTree(t *sitter.Tree) (unsafe.Pointer, error) {
	if err := treeLayout(); err != nil {
		return nil, err
	}
	if t == nil || t.BaseTree == nil {
		return nil, fmt.Errorf("%w: no tree", errCopy)
	}
	return *(*unsafe.Pointer)(unsafe.Pointer(t.BaseTree)), nil
}

// copyBuf holds the record buffer a Parser reuses from file to file.
type copyBuf struct {
	recs []C.vs_node
	kids []int32
	// reuse: the previous tree's nodes and child lists are no longer read,
	// so build may overwrite them (see Parser.ParseTransient).
	reuse    bool
	nodes    []Node
	children []*Node
}

// keepRecs is the largest record buffer kept between files (about 7 MB);
// larger ones are dropped after the file that needed them.
const keepRecs = 1 << 18

// copyTree copies tree into Go nodes and returns the root and the number of
// nodes kept.
func (b *copyBuf) copyTree(ctx context.Context, tree *sitter.Tree, l *Lang, maxDepth, maxNodes int) (*Node, int, error) {
	ct, err := cTree(tree)
	if err != nil {
		return nil, 0, err
	}
	defer runtime.KeepAlive(tree)
	flags := l.flags
	var flagPtr *C.uint8_t
	if len(flags) > 0 {
		flagPtr = (*C.uint8_t)(unsafe.Pointer(&flags[0]))
	}
	w := C.vs_walk_begin(ct, C.uint32_t(maxDepth), C.uint32_t(maxNodes))
	if w == nil {
		return nil, 0, fmt.Errorf("%w: walk could not start", errCopy)
	}
	defer C.vs_walk_end(w)
	recs := b.recs[:0]
	if cap(recs) < 1024 {
		recs = make([]C.vs_node, 0, 1024)
	}
	for {
		if len(recs) == cap(recs) {
			recs = append(recs, C.vs_node{})[:len(recs)]
		}
		var written C.uint32_t
		free := recs[len(recs):cap(recs)]
		st := C.vs_walk_next(w, flagPtr, C.uint32_t(len(flags)), &free[0], C.uint32_t(len(free)), &written)
		recs = recs[:len(recs)+int(written)]
		switch st {
		case C.VS_DONE:
		case C.VS_MORE:
			if err := ctx.Err(); err != nil {
				return nil, len(recs), err
			}
			continue
		case C.VS_TOO_DEEP:
			return nil, int(C.vs_walk_count(w)), ErrTooDeep
		case C.VS_TOO_LARGE:
			return nil, int(C.vs_walk_count(w)), ErrTooLarge
		default:
			return nil, len(recs), fmt.Errorf("%w: walk status %d", errCopy, st)
		}
		break
	}
	if cap(recs) <= keepRecs {
		b.recs = recs
	} else {
		b.recs = nil
	}
	if err := ctx.Err(); err != nil {
		return nil, len(recs), err
	}
	return b.build(recs, l), len(recs), nil
}

// build turns the preorder records into nodes: one slice of nodes, one
// backing array for all child lists.
func (b *copyBuf) build(recs []C.vs_node, l *Lang) *Node {
	n := len(recs)
	if cap(b.kids) < n {
		b.kids = make([]int32, n)
	}
	counts := b.kids[:n]
	clear(counts)
	for i := 1; i < n; i++ {
		counts[recs[i].parent]++
	}
	var nodes []Node
	var kids []*Node
	if b.reuse && n <= keepRecs {
		if cap(b.nodes) < n {
			b.nodes = make([]Node, n)
			b.children = make([]*Node, n)
		}
		nodes, kids = b.nodes[:n], b.children[:n]
		clear(nodes)
		clear(kids)
	} else {
		nodes = make([]Node, n)
		if n > 1 {
			kids = make([]*Node, n-1)
		}
	}
	off := 0
	for i := range nodes {
		if c := int(counts[i]); c > 0 {
			// capacity capped so that a caller's append copies instead of
			// writing into a sibling's list
			nodes[i].Children = kids[off:off:(off + c)]
			off += c
		}
	}
	syms, fields := l.syms, l.fields
	for i := range recs {
		r := &recs[i]
		nd := &nodes[i]
		if sym := int(r.symbol); sym < len(syms) {
			nd.Type, nd.Named = syms[sym].name, syms[sym].named
		} else {
			nd.Type, nd.Named = l.symbolName(uint16(r.symbol)), r.named != 0
		}
		if f := int(r.field); f < len(fields) {
			nd.Field = fields[f]
		}
		nd.Start, nd.End = uint32(r.start), uint32(r.end)
		nd.Row, nd.EndRow = int(r.row), int(r.end_row)
		if i > 0 {
			p := &nodes[r.parent]
			nd.Parent = p
			p.Children = append(p.Children, nd)
		}
	}
	nodes[0].Named = true
	if n > keepRecs {
		b.kids = nil
	}
	return &nodes[0]
}

// symbolName names a symbol outside the grammar's table (tree-sitter's ERROR
// symbol); such nodes are rare, so the binding is asked each time.
func (l *Lang) symbolName(sym uint16) string {
	return l.grammar().SymbolName(sitter.Symbol(sym))
}
