package javascript

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// fnCtx is the lowering state of one function (or of the module code).
type fnCtx struct {
	l      *lowerer
	b      *ir.Builder
	parent *fnCtx
	scopes []map[string]*sym // innermost last; scopes[0] is the function scope
	module bool              // the module's top-level code
	arrow  bool              // arrow functions see the enclosing this
	class  *classInfo        // class of a method
	static bool
	this   ir.VarID // the receiver variable once created

	hoisted []*syntax.Node  // function declarations already lowered by hoist
	used    map[string]bool // variable names of the function (see fresh)
}

// sym is a name bound in a function scope: a variable or an import made
// inside the function.
type sym struct {
	v     ir.VarID
	imp   *importRef
	class string // a class declared inside a function: its qualified name
}

// refKind classifies what a name refers to.
type refKind uint8

const (
	refLocal  refKind = iota + 1 // a variable of the current function (possibly Captured)
	refTop                       // a module-level variable read or written from a function
	refFunc                      // a module-level function declaration
	refClass                     // a module-level class
	refImport                    // an import binding
	refGlobal                    // a name the file does not declare: a global of the platform
)

type ref struct {
	kind refKind
	v    ir.VarID
	name string     // source name
	qual string     // refTop, refFunc, refClass: qualified name
	imp  *importRef // refImport
	typ  string     // evident type (refTop)
}

func newFnCtx(l *lowerer, b *ir.Builder, parent *fnCtx) *fnCtx {
	return &fnCtx{l: l, b: b, parent: parent, scopes: []map[string]*sym{{}}, this: ir.NoVar}
}

func (fc *fnCtx) push() { fc.scopes = append(fc.scopes, map[string]*sym{}) }
func (fc *fnCtx) pop()  { fc.scopes = fc.scopes[:len(fc.scopes)-1] }

// declare binds name to a fresh variable in the innermost scope (the
// function scope when fnScope is set, for var and function declarations).
func (fc *fnCtx) declare(name, typ string, fnScope bool) ir.VarID {
	scope := fc.scopes[len(fc.scopes)-1]
	if fnScope {
		scope = fc.scopes[0]
	}
	if s, ok := scope[name]; ok && s.imp == nil {
		fc.b.SetType(s.v, typ)
		return s.v
	}
	v := fc.b.Declare(fc.fresh(name), typ)
	scope[name] = &sym{v: v}
	return v
}

// fresh returns a variable name not yet used in the function: the source
// name, or for a redeclaration in another block the name with "#<n>", so
// that closures, which capture variables by name, find the right one.
func (fc *fnCtx) fresh(name string) string {
	if fc.used == nil {
		fc.used = map[string]bool{}
		for _, v := range fc.b.Fn.Vars {
			fc.used[v.Name] = true
		}
	}
	cand := name
	for n := 2; fc.used[cand]; n++ {
		cand = name + "#" + itoa(n)
	}
	fc.used[cand] = true
	return cand
}

// bindImport binds an import made inside a function body.
func (fc *fnCtx) bindImport(name string, imp *importRef) {
	fc.scopes[len(fc.scopes)-1][name] = &sym{v: ir.NoVar, imp: imp}
}

// lookupLocal finds name among the function's own scopes.
func (fc *fnCtx) lookupLocal(name string) (*sym, int) {
	for i := len(fc.scopes) - 1; i >= 0; i-- {
		if s, ok := fc.scopes[i][name]; ok {
			return s, i
		}
	}
	return nil, -1
}

// resolve finds what name refers to at the current point.
func (fc *fnCtx) resolve(name string) ref {
	if s, depth := fc.lookupLocal(name); s != nil {
		if s.imp != nil {
			return ref{kind: refImport, name: name, imp: s.imp}
		}
		if s.class != "" {
			return ref{kind: refClass, name: name, qual: s.class}
		}
		if fc.module && depth == 0 {
			if d := fc.l.top[name]; d != nil && d.kind == topVar {
				return ref{kind: refLocal, v: s.v, name: name, qual: fc.l.mod + "." + name, typ: d.typ}
			}
		}
		return ref{kind: refLocal, v: s.v, name: name}
	}
	if fc.parent != nil {
		r := fc.parent.resolveFrom(name)
		if r.kind == refLocal {
			pv := fc.parent.b.Fn.Vars[r.v]
			v := fc.b.Declare(pv.Name, pv.Type)
			fc.b.Fn.Vars[v].Captured = true
			if fc.used != nil {
				fc.used[pv.Name] = true
			}
			fc.scopes[0][name] = &sym{v: v}
			return ref{kind: refLocal, v: v, name: name}
		}
		return r
	}
	return fc.l.resolveModule(name)
}

// resolveFrom resolves a name on behalf of a nested function: a module-level
// variable of the module code is a global there, not a captured local.
func (fc *fnCtx) resolveFrom(name string) ref {
	if fc.module {
		if s, depth := fc.lookupLocal(name); s != nil {
			if s.imp != nil {
				return ref{kind: refImport, name: name, imp: s.imp}
			}
			if s.class != "" {
				return ref{kind: refClass, name: name, qual: s.class}
			}
			if depth > 0 || fc.l.top[name] == nil {
				return ref{kind: refLocal, v: s.v, name: name}
			}
		}
		return fc.l.resolveModule(name)
	}
	return fc.resolve(name)
}

// resolveModule resolves a name at module level, as seen from a function.
func (l *lowerer) resolveModule(name string) ref {
	if imp := l.imports[name]; imp != nil {
		return ref{kind: refImport, name: name, imp: imp}
	}
	if d := l.top[name]; d != nil {
		switch d.kind {
		case topFunc:
			return ref{kind: refFunc, name: name, qual: d.qname}
		case topClass:
			return ref{kind: refClass, name: name, qual: d.qname}
		default:
			return ref{kind: refTop, name: name, qual: l.mod + "." + name, typ: d.typ}
		}
	}
	return ref{kind: refGlobal, name: name}
}

// globalObjects are the names of the global object itself: window.x and
// globalThis.x are the global x.
var globalObjects = map[string]bool{"window": true, "globalThis": true, "self": true, "global": true}
