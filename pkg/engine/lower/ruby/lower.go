// Package ruby lowers Ruby syntax trees (tree-sitter-ruby) into the shared
// IR, following the conventions of package ir. Ruby-specific choices:
//
//   - Top-level code, and the code of class and module bodies (constant
//     assignments, class-level calls such as before_action), runs in order in
//     File.Init ("<module>"). Inside a class body a bare call is a CallStatic
//     on the class.
//   - Classes and modules are ir.Classes named by their constant path
//     ("Outer::Inner"); modules carry the annotation "module". `class A < B`
//     and include/extend/prepend add the resolved names to Super. A constant
//     path resolves against the enclosing modules when the file declares it
//     there, else it is kept as written.
//   - Methods: QName "Class#name" for instance methods, "Class.name" for
//     singleton methods (def self.x, class << self, module_function), which
//     are Static and have no This; top-level defs are plain functions named
//     by their simple name. `initialize` is "<init>". Instance methods have
//     This "self" typed with the class. Methods after `private`/`protected`
//     (or named by `private :x`, `private def x`) carry an annotation of that
//     name.
//   - Instance variables @x are fields "x" of self (OpLoadField/OpStoreField;
//     in class bodies and top-level code, globals "Class::@x"). Class
//     variables are globals "Class::@@x", globals keep their name "$x",
//     constants are OpLoadGlobal of the qualified path.
//   - attr_accessor/attr_reader/attr_writer declare fields and tiny methods
//     "x" (returns self.x) and "x=" (stores its argument), so `obj.x` and
//     `obj.x = v`, lowered as CallMethod "x" / "x=", reach the field through
//     ordinary calls.
//   - A bare identifier that is not a local variable is a call without
//     arguments (CallFunc), as in Ruby. A call without receiver of an
//     instance method the file declares in the enclosing class (or its
//     superclasses and mixins declared in the file), accessors included, is
//     a CallMethod on self, so the method sees the receiver. `Foo.new(...)` is CallNew Qual "Foo";
//     `Foo.bar` is CallStatic Qual "Foo", except on constants the file
//     assigns a value to and on ENV, ARGV and the standard streams, which are
//     values (CallMethod on the OpLoadGlobal).
//   - Blocks, procs and lambdas are closures (Funcs named "<block>" or
//     "<lambda>" with Parent, Class of the enclosing method, Captured outer
//     locals and "self"). A block is passed as the last argument of its call
//     with keyword name "&block" in Call.Names. A method's block parameter is
//     the parameter "&block" (a declared `&blk` is assigned from it); `yield`
//     is CallDynamic on it, as is `f.(x)` and `f.call(x)` on a local holding a
//     closure. `lambda`/`proc`/`Proc.new` with a block evaluate to the closure
//     itself; `loop do ... end` is lowered as an inline loop.
//   - Keyword arguments (`key: value`, `:key => value`, `"key" => value`) are
//     Call.Names entries; `**h` is named "**".
//   - Symbols are string constants of their bare name (`:name` is "name"), so
//     that params[:name] and params["name"] read the same key, as Rails'
//     indifferent access does.
//   - Interpolated strings, heredocs, symbols, regexes and backticks are
//     chains of "+"; backticks and %x() are CallFunc "`". Regex literals are
//     string constants of their source. Ranges are OpMakeList "Range" of
//     their bounds.
//   - An element assignment on a variable, field or literal is OpStoreIndex;
//     on the result of a method call (cookies[:k] = v, session[:k] = v) it is
//     CallMethod "[]=", Ruby's own meaning, so that models can name it.
//     `a << b` is CallMethod "<<" (Array#<< appends).
//   - case/when is a chain of "==" branches for literal patterns; ranges,
//     classes, regexes and other patterns are opaque conditions (OpOpaque of
//     subject and pattern). case/in tests literals with "==" and binds the
//     variables of array, hash and find patterns by index and key loads.
//   - begin/rescue/else/ensure use Block.Handlers and OpCatch (types
//     joined by "|", "StandardError" by default); retry jumps back to the
//     body; an ensure also runs on a catch-all path that re-raises. raise is
//     a throw of a CallNew of the named class.
//   - Implicit results: the last value of a method, block or lambda body is
//     returned. In closures, next and break return from the closure.
//   - Rails route helpers: a call without receiver or block whose name ends
//     in _path or _url, of a method the file does not define, is a function
//     of the module Rails mixes the helpers in from, CallFunc Qual
//     "ActionDispatch::Routing::UrlFor" (route helpers are generated from
//     config/routes.rb, so their names cannot be listed in models).
//   - Calls of Enumerable iterators (each, map, select, ...) with a literal
//     block also call the block on some element of the receiver
//     (CallDynamic), as the iterator does; map-like iterators evaluate to a
//     list of the block's results.
//   - require/require_relative are recorded as Imports with an empty Alias
//     (relative ones resolved to the repository path without extension).
package ruby

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// ErrNotRuby is returned for a tree that is not a Ruby program.
var ErrNotRuby = errors.New("not a ruby program tree")

// lowerer holds the state of one file.
type lowerer struct {
	path     string
	src      []byte
	file     *ir.File
	heredocs map[*syntax.Node]*syntax.Node // heredoc_beginning → heredoc_body
	declared map[string]bool               // qualified classes, modules and constants of the file
	values   map[string]bool               // qualified constants assigned a value
	classes  map[string]*ir.Class
	defs     map[string]bool            // names of the methods the file defines
	methods  map[string]map[string]bool // instance method names (defs and accessors) by class
	closures int
}

// Lower turns the syntax tree of one Ruby file into IR.
func Lower(filePath string, src []byte, root *syntax.Node) (*ir.File, error) {
	// A file that does not parse at all has an ERROR root; its parts are
	// lowered like a program's.
	if root == nil || (root.Type != "program" && root.Type != "ERROR") {
		return nil, fmt.Errorf("lower %s: %w", filePath, ErrNotRuby)
	}
	f := &ir.File{Path: filePath, Lang: "ruby", Src: src, Lines: lower.Lines(src)}
	l := &lowerer{
		path: filePath, src: src, file: f,
		heredocs: map[*syntax.Node]*syntax.Node{},
		declared: map[string]bool{}, values: map[string]bool{},
		classes: map[string]*ir.Class{}, defs: map[string]bool{}, methods: map[string]map[string]bool{},
	}
	l.prepass(root)
	b := ir.NewBuilder(f, "<module>", filePath+"#<module>")
	b.Fn.Pos = pos(root)
	fs := &fnState{l: l, b: b, ctx: &classCtx{}, self: ir.NoVar, block: ir.NoVar, redo: -1}
	fs.body(root.Children, false)
	f.Init = b.Finish(pos(root))
	return f, nil
}

// pos converts a node's range.
func pos(n *syntax.Node) ir.Pos {
	return lower.Pos(n)
}

func (l *lowerer) text(n *syntax.Node) string { return n.Text(l.src) }

// prepass pairs heredoc beginnings with their bodies (both in document
// order) and records the classes, modules and constants the file declares.
func (l *lowerer) prepass(root *syntax.Node) {
	var begins, bodies []*syntax.Node
	var walk func(n *syntax.Node, nesting string)
	walk = func(n *syntax.Node, nesting string) {
		switch n.Type {
		case "heredoc_beginning":
			begins = append(begins, n)
		case "heredoc_body":
			bodies = append(bodies, n)
		case "method", "singleton_method":
			if name := n.Child("name"); name != nil {
				l.defs[l.text(name)] = true
				if n.Type == "method" {
					l.addMethodName(nesting, l.text(name))
				}
			}
		case "call":
			if m := n.Child("method"); m != nil && n.Child("receiver") == nil {
				switch l.text(m) {
				case "attr_accessor", "attr_reader", "attr_writer", "attr":
					for _, a := range n.Child("arguments").NamedChildren() {
						if a.Type == "simple_symbol" {
							l.addMethodName(nesting, strings.TrimPrefix(l.text(a), ":"))
						}
					}
				}
			}
		case "class", "module":
			if name := n.Child("name"); name != nil {
				q := l.declName(name, nesting)
				l.declared[q] = true
				nesting = q
			}
		case "assignment":
			if left := n.Child("left"); left != nil && (left.Type == "constant" || left.Type == "scope_resolution") {
				q := l.declName(left, nesting)
				l.declared[q], l.values[q] = true, true
			}
		}
		for _, c := range n.Children {
			walk(c, nesting)
		}
	}
	walk(root, "")
	for i := 0; i < len(begins) && i < len(bodies); i++ {
		l.heredocs[begins[i]] = bodies[i]
	}
}

func (l *lowerer) addMethodName(class, name string) {
	if l.methods[class] == nil {
		l.methods[class] = map[string]bool{}
	}
	l.methods[class][name] = true
}

// hasMethod reports whether the file declares an instance method name in
// class q or in one of its superclasses and mixins declared in the file.
func (l *lowerer) hasMethod(q, name string, depth int) bool {
	if l.methods[q][name] {
		return true
	}
	if c := l.classes[q]; c != nil && depth < 8 {
		for _, s := range c.Super {
			if l.hasMethod(s, name, depth+1) {
				return true
			}
		}
	}
	return false
}

// declName is the qualified name a class, module or constant declaration
// defines inside the module nesting.
func (l *lowerer) declName(n *syntax.Node, nesting string) string {
	t := strings.Join(strings.Fields(l.text(n)), "")
	if strings.HasPrefix(t, "::") {
		return t[2:]
	}
	if nesting == "" {
		return t
	}
	return nesting + "::" + t
}

// resolveConst resolves a constant path written inside the given nesting
// (innermost last): a name the file declares in an enclosing module is
// qualified with it, anything else is kept as written.
func (l *lowerer) resolveConst(t string, nesting []string) string {
	t = strings.Join(strings.Fields(t), "")
	if strings.HasPrefix(t, "::") {
		return t[2:]
	}
	first, _, _ := strings.Cut(t, "::")
	for i := len(nesting) - 1; i >= 0; i-- {
		if l.declared[nesting[i]+"::"+first] {
			return nesting[i] + "::" + t
		}
	}
	return t
}

// class returns the class of a qualified name, creating it on first use
// (a reopened class is the same ir.Class).
func (l *lowerer) class(q string, outer *ir.Class, n *syntax.Node) *ir.Class {
	if c := l.classes[q]; c != nil {
		return c
	}
	name := q
	if i := strings.LastIndex(q, "::"); i >= 0 {
		name = q[i+2:]
	}
	c := &ir.Class{Name: name, QName: q, Outer: outer, File: l.file, Pos: pos(n)}
	l.classes[q] = c
	l.file.Classes = append(l.file.Classes, c)
	return c
}

// requirePath is the import path of a require: relative ones are resolved
// against the file's directory, without extension.
func (l *lowerer) requirePath(name, feature string) string {
	feature = strings.TrimSuffix(feature, ".rb")
	if name == "require_relative" {
		return path.Clean(path.Join(path.Dir(l.path), feature))
	}
	return feature
}
