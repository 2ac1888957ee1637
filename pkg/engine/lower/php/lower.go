package php

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// ErrNotPHP is returned for a tree that is not a PHP program.
var ErrNotPHP = errors.New("not a PHP syntax tree")

// lowerer is the state of lowering one file.
type lowerer struct {
	path    string
	src     []byte
	file    *ir.File
	scope   *scope
	lambdas int // closures lowered so far, for unique names
	anon    int // anonymous classes lowered so far
	labels  int // loop labels handed out
	// shortEcho is set after a `<?=` tag: the next expression statement is
	// echoed.
	shortEcho bool
}

// Lower turns the syntax tree of one PHP file into IR. path is the
// repository-relative, slash-separated file path; root is the tree of src
// parsed with syntax.PHP.
func Lower(path string, src []byte, root *syntax.Node) (*ir.File, error) {
	// A file tree-sitter cannot make sense of has an ERROR root; what it
	// recognised inside is still lowered.
	if root == nil || (root.Type != "program" && root.Type != "ERROR") {
		return nil, fmt.Errorf("lower %s: %w", path, ErrNotPHP)
	}
	f := &ir.File{Path: path, Lang: "php", Src: src, Lines: lower.Lines(src)}
	l := &lowerer{path: path, src: src, file: f, scope: newScope()}
	l.findNamespace(root)
	f.Package = l.scope.ns
	l.scope.ns = ""
	top := l.newFunc("<module>", path, nil, nil)
	top.init = true
	top.stmts(root.Children)
	f.Init = top.finish(posOf(root))
	return f, nil
}

// findNamespace sets the scope's namespace to the file's first namespace
// declaration, which names the file's Package.
func (l *lowerer) findNamespace(root *syntax.Node) {
	for _, c := range root.Children {
		if c.Type == "namespace_definition" {
			if n := c.Child("name"); n != nil {
				l.scope.ns = nameText(n, l.src)
			}
			return
		}
	}
}

func posOf(n *syntax.Node) ir.Pos {
	return lower.Pos(n)
}

// frame is an enclosing loop or switch, for break N / continue N.
type frame struct {
	label    string
	isSwitch bool
}

// fnLowerer lowers the body of one function, method, closure or the
// top-level code.
type fnLowerer struct {
	l           *lowerer
	b           *ir.Builder
	cls         *ir.Class // enclosing class, nil outside classes
	parentClass string    // resolved parent class of cls
	init        bool      // top-level code: variables are script globals
	// globals are the variables bound to script globals by `global`.
	globals map[string]bool
	// assigned are the variables written (or parameters) so far, in
	// lowering order.
	assigned map[string]bool
	frames   []frame
	// Closures: uses are the names of `use (...)`; arrow functions capture
	// every variable that is not a parameter.
	closure bool
	arrow   bool
	uses    map[string]bool
	parent  *fnLowerer
	thisVar ir.VarID
	// preload are the loads of script globals read before any write in
	// top-level code, emitted at its entry.
	preload []ir.Instr
}

func (l *lowerer) newFunc(name, qname string, cls *ir.Class, outer *fnLowerer) *fnLowerer {
	f := &fnLowerer{
		l: l, b: ir.NewBuilder(l.file, name, qname), cls: cls,
		globals: map[string]bool{}, assigned: map[string]bool{}, thisVar: ir.NoVar, parent: outer,
	}
	if outer != nil {
		f.parentClass = outer.parentClass
	}
	return f
}

// finish closes the function and emits the preloads.
func (f *fnLowerer) finish(p ir.Pos) *ir.Func {
	fn := f.b.Finish(p)
	fn.Pos = p
	if len(f.preload) > 0 {
		entry := fn.Blocks[0]
		entry.Instrs = append(f.preload, entry.Instrs...)
	}
	return fn
}

// label returns a fresh loop label.
func (l *lowerer) label() string {
	l.labels++
	return "L" + strconv.Itoa(l.labels)
}

func (f *fnLowerer) text(n *syntax.Node) string { return n.Text(f.l.src) }
