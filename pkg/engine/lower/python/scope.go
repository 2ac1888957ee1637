package python

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// scope is one function being lowered (the module body included) with
// Python's scoping rule: a name assigned anywhere in a function is local to
// it unless declared global or nonlocal.
type scope struct {
	l      *lowerer
	b      *ir.Builder
	parent *scope // enclosing function scope; nil for the module
	module bool

	vars     map[string]ir.VarID // variables bound so far
	locals   map[string]bool     // names local to the function
	global   map[string]bool     // declared global
	nonlocal map[string]bool     // declared nonlocal
	classes  map[string]string   // classes defined in the function: name → QName
	comp     map[string]int      // names bound by an enclosing comprehension
	assigned map[ir.VarID]string // type of the values assigned so far (conflictType when they differ)
	declared map[ir.VarID]bool   // variables with an annotated type
	cls      *ir.Class           // class of a method
	gen      ir.VarID            // list of yielded values of a generator, or NoVar
	excs     []ir.VarID          // exceptions of the enclosing handlers, innermost last
	lambdas  int
}

func newScope(l *lowerer, b *ir.Builder, parent *scope, module bool) *scope {
	// the rarely written maps (global, nonlocal, classes, comp) are made on
	// first write
	return &scope{l: l, b: b, parent: parent, module: module, vars: make(map[string]ir.VarID, 8), locals: make(map[string]bool, 8),
		gen: ir.NoVar}
}

// nameKind classifies what a name refers to.
type nameKind uint8

const (
	nkUnknown nameKind = iota // built-in or undefined: used by its name
	nkLocal                   // a local variable (Var)
	nkGlobal                  // a module-level global (Qual)
	nkImport                  // an imported object (Qual)
	nkModule                  // an imported module (Qual)
	nkTopFunc                 // a function of the module (Name)
	nkClass                   // a class of the file (Qual)
)

type nameRef struct {
	kind nameKind
	v    ir.VarID
	qual string
	typ  string
}

// lookup resolves a name read in scope s.
func (s *scope) lookup(name string) nameRef {
	if s.module {
		if v, ok := s.vars[name]; ok {
			return nameRef{kind: nkLocal, v: v}
		}
		return s.l.moduleRef(name)
	}
	if s.global[name] {
		return s.l.moduleRef(name)
	}
	if q, ok := s.classes[name]; ok {
		return nameRef{kind: nkClass, qual: q}
	}
	if v, ok := s.vars[name]; ok {
		return nameRef{kind: nkLocal, v: v}
	}
	if s.locals[name] && !s.nonlocal[name] {
		return nameRef{kind: nkLocal, v: s.local(name)}
	}
	for p := s.parent; p != nil && !p.module; p = p.parent {
		if p.global[name] {
			break
		}
		if p.locals[name] || p.nonlocal[name] {
			v := s.b.Captured(name, "")
			s.vars[name] = v
			return nameRef{kind: nkLocal, v: v}
		}
		if q, ok := p.classes[name]; ok {
			return nameRef{kind: nkClass, qual: q}
		}
	}
	return s.l.moduleRef(name)
}

// moduleRef resolves a name at module level.
func (l *lowerer) moduleRef(name string) nameRef {
	if q, ok := l.classes[name]; ok {
		return nameRef{kind: nkClass, qual: q}
	}
	if l.topDefs[name] {
		return nameRef{kind: nkTopFunc, qual: name}
	}
	if l.globals[name] {
		return nameRef{kind: nkGlobal, qual: l.qual(name), typ: l.gtypes[name]}
	}
	if q, ok := l.imports[name]; ok {
		if l.modules[name] {
			return nameRef{kind: nkModule, qual: q}
		}
		return nameRef{kind: nkImport, qual: q}
	}
	return nameRef{kind: nkUnknown, qual: name}
}

// local returns the variable of a local name, creating it.
func (s *scope) local(name string) ir.VarID {
	if v, ok := s.vars[name]; ok {
		return v
	}
	v := s.b.Declare(name, "")
	s.vars[name] = v
	return v
}

// collectLocals applies Python's rule to a function body: every name bound
// in it (assignment, for, with, except, import, def, class, walrus, del,
// match capture) is local. It reports whether the body yields.
func (s *scope) collectLocals(body *syntax.Node) (yields bool) {
	var walk func(n *syntax.Node)
	bind := func(t *syntax.Node) {
		for _, name := range targetNames(s.l.src, t, nil) {
			s.locals[name] = true
		}
	}
	walk = func(n *syntax.Node) {
		switch n.Type {
		case "function_definition", "class_definition":
			s.locals[s.l.text(n.Child("name"))] = true
			for _, c := range n.Children {
				if c.Field == "superclasses" || c.Field == "parameters" {
					walk(c)
				}
			}
			return
		case "lambda":
			return
		case "list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression":
			// their loop variables belong to the comprehension; a walrus
			// inside still binds in the function
			for _, c := range n.Children {
				if c.Type == "for_in_clause" {
					if r := c.Child("right"); r != nil {
						walk(r)
					}
					continue
				}
				walk(c)
			}
			return
		case "global_statement":
			for _, c := range named(n) {
				s.global = setFlag(s.global, s.l.text(c))
			}
			return
		case "nonlocal_statement":
			for _, c := range named(n) {
				s.nonlocal = setFlag(s.nonlocal, s.l.text(c))
			}
			return
		case "assignment", "augmented_assignment", "for_statement":
			bind(n.Child("left"))
		case "named_expression":
			bind(n.Child("name"))
		case "as_pattern_target":
			bind(n)
		case "delete_statement":
			for _, c := range named(n) {
				bind(c)
			}
		case "import_statement", "import_from_statement":
			// imports are resolved file-wide (see collectImports)
			return
		case "case_pattern":
			if ns := named(n); len(ns) == 1 && ns[0].Type == "dotted_name" && len(named(ns[0])) == 1 {
				s.locals[s.l.text(ns[0])] = true
			}
		case "as_pattern":
			if n.Parent != nil && n.Parent.Type == "case_pattern" {
				if id := n.Child("alias"); id != nil {
					bind(id)
				} else if ids := named(n); len(ids) > 1 {
					bind(ids[len(ids)-1])
				}
			}
		case "splat_pattern":
			bind(n.FirstOfType("identifier"))
		case "yield":
			yields = true
		}
		for _, c := range n.Children {
			if c.Named {
				walk(c)
			}
		}
	}
	walk(body)
	for name := range s.global {
		delete(s.locals, name)
	}
	return yields
}

// setFlag sets m[k], making the map on first use.
func setFlag(m map[string]bool, k string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[k] = true
	return m
}
