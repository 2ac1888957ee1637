// Package python lowers tree-sitter-python syntax trees into the engine's IR
// (package ir), following the conventions of the ir package comment.
//
// Naming. A file's Package is its module path from the repository root
// (app/views.py → "app.views", pkg/__init__.py → "pkg"). Functions are
// "<module>.<name>", methods "<module>.<Class>.<name>", nested functions
// "<outer QName>.<name>", lambdas "<outer QName>$lambda<N>". The module's
// top-level code is File.Init, named "<module>".
//
// Names. Imports are resolved to dotted module paths: `import os` then
// `os.system(x)` is CallStatic Qual "os"; `from subprocess import run` then
// `run(x)` is CallFunc Qual "subprocess"; an imported object used as a value
// (`from flask import request`) is OpLoadGlobal "flask.request". A name whose
// first letter is upper case that is called is taken for a class, following
// PEP 8: `Markup(x)` after `from markupsafe import Markup` is CallNew Qual
// "markupsafe.Markup". Attribute chains rooted at an imported module whose
// segments are lower case are module paths (`os.path.join(x)` is CallStatic
// Qual "os.path" even after a plain `import os`). Names assigned at module
// level are globals "<module>.<name>": the module body stores them with
// OpStoreGlobal after each assignment and functions read them with
// OpLoadGlobal. Built-ins (`str`, `open`, `eval`) are CallFunc with Qual "".
//
// Functions. `self` (or `cls`) of a method is Func.This, typed with the class;
// it is not among Params. `__init__` is the constructor, and calling a class
// is CallNew with Qual the class's qualified name and Name "<init>".
// Decorators become Func.Annotations: the name resolved through imports and
// through the type of module-level objects (`app = Flask(__name__)` then
// `@app.route("/x")` is "flask.Flask.route"), else as written; constant
// arguments by position ("0", "1", …) or keyword, lists of constants joined
// with ",". A parameter default that is a call of a resolvable name (FastAPI's
// `q: str = Query(None)`) becomes an annotation of that parameter.
//
// Expressions. Comprehensions and generator expressions are lowered inline as
// loops that fill a fresh list, set or dict (their variables are fresh
// variables of the enclosing function); lambdas and nested functions are
// separate Funcs with Parent set. f-strings are concatenations ("+") of their
// constant parts and formatted values; `"..." % args` is a call of method
// "__mod__" on the format string with a tuple operand spread into arguments;
// slices are calls of "__getitem__" with a `slice(start, stop, step)`
// argument. `and`/`or`, conditional expressions and chained comparisons are
// branches when an operand has a call. Keyword arguments set Call.Names;
// `*x` and `**x` arguments are named "*" and "**". `with E as v` binds v to
// the call E.__enter__(). A generator function collects what it yields in a
// list that it returns.
package python

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// ErrNotModule is returned when the tree is not a Python module.
var ErrNotModule = errors.New("not a python module tree")

// Lower turns the tree-sitter-python tree of the file at path (repository
// relative, slash separated) into an ir.File.
func Lower(path string, src []byte, root *syntax.Node) (*ir.File, error) {
	if root == nil || (root.Type != "module" && root.Type != "ERROR") {
		return nil, fmt.Errorf("lower %s: %w", path, ErrNotModule)
	}
	mod, pkg := ModulePath(path)
	f := &ir.File{Path: path, Lang: "python", Package: mod, Src: src, Lines: lower.Lines(src)}
	l := &lowerer{
		src:      src,
		file:     f,
		mod:      mod,
		pkg:      pkg,
		imports:  map[string]string{},
		modules:  map[string]bool{},
		globals:  map[string]bool{},
		gtypes:   map[string]string{},
		topFuncs: map[string]*ir.Func{},
		topDefs:  map[string]bool{},
		classes:  map[string]string{},
		names:    map[string]int{},
	}
	l.collectImports(root)
	l.collectModule(root)
	l.lowerModule(root)
	l.applyFixups()
	return f, nil
}

// ModulePath returns the module path of a repository-relative file and the
// package its relative imports start from.
func ModulePath(path string) (module, pkg string) {
	p := strings.TrimPrefix(path, "./")
	if i := strings.LastIndexByte(p, '.'); i > strings.LastIndexByte(p, '/') {
		p = p[:i]
	}
	p = strings.ReplaceAll(p, "/", ".")
	if p == "__init__" {
		return "", ""
	}
	if strings.HasSuffix(p, ".__init__") {
		p = strings.TrimSuffix(p, ".__init__")
		return p, p
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p, p[:i]
	}
	return p, ""
}

// lowerer holds the per-file state.
type lowerer struct {
	src  []byte
	file *ir.File
	mod  string // module path
	pkg  string // package relative imports start from

	imports map[string]string // local name → qualified name
	modules map[string]bool   // local names bound by `import x` (module objects)
	globals map[string]bool   // names assigned at module level
	gtypes  map[string]string // evident types of module-level names

	topFuncs map[string]*ir.Func // module-level functions by name, once lowered
	topDefs  map[string]bool     // names of module-level functions
	classes  map[string]string   // module-level classes: name → QName

	names  map[string]int // qualified names handed out, for uniqueness
	fixups []fixup
}

// fixup is an OpFunc referring to a module-level function lowered later.
type fixup struct {
	fn    *ir.Func
	block int
	instr int
	name  string
}

func (l *lowerer) applyFixups() {
	for _, fx := range l.fixups {
		in := &fx.fn.Blocks[fx.block].Instrs[fx.instr]
		if target := l.topFuncs[fx.name]; target != nil {
			in.Fn = target
			continue
		}
		// the function was never lowered (it cannot happen for a name
		// collected from the module body, but keep the IR valid)
		in.Op, in.Fn, in.Name = ir.OpLoadGlobal, nil, l.qual(fx.name)
	}
}

// qual qualifies a module-level name.
func (l *lowerer) qual(name string) string {
	if l.mod == "" {
		return name
	}
	return l.mod + "." + name
}

// unique returns q, or q with a "$N" suffix when q was handed out before.
func (l *lowerer) unique(q string) string {
	n := l.names[q]
	l.names[q] = n + 1
	if n == 0 {
		return q
	}
	return fmt.Sprintf("%s$%d", q, n+1)
}

// pos returns the IR position of a node.
func pos(n *syntax.Node) ir.Pos {
	return lower.Pos(n)
}

func (l *lowerer) text(n *syntax.Node) string { return n.Text(l.src) }

// lowerModule lowers the module body into File.Init.
func (l *lowerer) lowerModule(root *syntax.Node) {
	b := ir.NewBuilder(l.file, "<module>", l.qual("<module>"))
	b.Fn.Pos = pos(root)
	s := newScope(l, b, nil, true)
	l.stmts(s, root.Children)
	l.file.Init = b.Finish(lower.EndPos(root))
}

// Parse is a convenience for tests and tools: it parses src with a fresh
// parser and lowers it.
func Parse(ctx context.Context, path string, src []byte) (*ir.File, error) {
	p := syntax.NewParser(syntax.Limits{})
	defer p.Close()
	root, _, err := p.Parse(ctx, syntax.Python, src)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return Lower(path, src, root)
}

// isNoise reports nodes that carry no value: comments and backslash line
// continuations, which the grammar keeps among an expression's children.
func isNoise(typ string) bool { return typ == "comment" || typ == "line_continuation" }

// named returns the named children of n without noise (comments, line
// continuations).
func named(n *syntax.Node) []*syntax.Node {
	cs := n.NamedChildren()
	out := cs[:0]
	for _, c := range cs {
		if !isNoise(c.Type) {
			out = append(out, c)
		}
	}
	return out
}
