package java

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// fnCtx is a function being lowered: its builder, lexical scopes and the
// enclosing function of lambdas and of methods of local classes.
type fnCtx struct {
	l      *lowerer
	b      *ir.Builder
	parent *fnCtx // enclosing function (lambdas, local and anonymous classes)
	cls    *classCtx
	lambda bool // a lambda or method reference: `this` is the enclosing one
	static bool
	this   ir.VarID

	scope    map[string]ir.VarID
	undo     []binding
	handlers [][]int // catch entries of the enclosing try bodies, innermost last
	yields   []yieldTarget
}

// binding records the previous meaning of a name shadowed in a block.
type binding struct {
	name string
	prev ir.VarID
	had  bool
}

// yieldTarget is where `yield v` of a switch expression goes.
type yieldTarget struct {
	result ir.VarID
	end    int
}

// bind makes name denote v until the enclosing block ends.
func (fc *fnCtx) bind(name string, v ir.VarID) {
	prev, had := fc.scope[name]
	fc.undo = append(fc.undo, binding{name: name, prev: prev, had: had})
	fc.scope[name] = v
}

// declare creates a local variable in the current block.
func (fc *fnCtx) declare(name, typ string) ir.VarID {
	v := fc.b.Declare(name, typ)
	fc.bind(name, v)
	return v
}

// mark and release delimit a block scope.
func (fc *fnCtx) mark() int { return len(fc.undo) }

func (fc *fnCtx) release(m int) {
	for i := len(fc.undo) - 1; i >= m; i-- {
		u := fc.undo[i]
		if u.had {
			fc.scope[u.name] = u.prev
		} else {
			delete(fc.scope, u.name)
		}
	}
	fc.undo = fc.undo[:m]
}

// lookupLocal finds a local variable of fc or of an enclosing function; a
// variable of an enclosing function becomes a captured variable of fc and
// of every function in between.
func (fc *fnCtx) lookupLocal(name string) (ir.VarID, bool) {
	if v, ok := fc.scope[name]; ok {
		return v, true
	}
	for p := fc.parent; p != nil; p = p.parent {
		v, ok := p.scope[name]
		if !ok {
			continue
		}
		typ := p.b.Fn.Vars[v].Type
		var out ir.VarID
		for q := fc; q != p; q = q.parent {
			c := q.b.Captured(name, typ)
			q.scope[name] = c
			if q == fc {
				out = c
			}
		}
		return out, true
	}
	return ir.NoVar, false
}

// thisVal returns the receiver of the current code (captured in lambdas),
// or None in static code.
func (fc *fnCtx) thisVal() ir.Value {
	if v, ok := fc.lookupLocal("this"); ok {
		return ir.V(v)
	}
	return ir.None
}

// params declares the formal parameters of a method, constructor or lambda.
func (fc *fnCtx) params(n *syntax.Node) {
	if n == nil {
		return
	}
	l := fc.l
	for _, p := range n.Children {
		switch p.Type {
		case "formal_parameter", "receiver_parameter":
			if p.Type == "receiver_parameter" {
				continue
			}
			name := l.text(p.Child("name"))
			typ := l.typeOf(p.Child("type"), fc.cls) + dims(l.text(p.Child("dimensions")))
			v := fc.b.Param(name, typ, l.annotations(p.FirstOfType("modifiers"), fc.cls))
			fc.bind(name, v)
		case "spread_parameter":
			var typ string
			var decl *syntax.Node
			for _, c := range p.Children {
				switch c.Type {
				case "variable_declarator":
					decl = c
				case "modifiers":
				default:
					if c.Named && typ == "" {
						typ = l.typeOf(c, fc.cls)
					}
				}
			}
			name := l.text(decl.Child("name"))
			v := fc.b.Param(name, typ+"[]", l.annotations(p.FirstOfType("modifiers"), fc.cls))
			fc.b.Fn.Params[len(fc.b.Fn.Params)-1].Rest = true
			fc.bind(name, v)
		case "identifier": // lambda parameter without type
			name := l.text(p)
			fc.bind(name, fc.b.Param(name, "", nil))
		}
	}
}

// finish closes the function.
func (fc *fnCtx) finish(n *syntax.Node) {
	fc.b.Finish(lower.EndPos(n))
}

// initializer lowers a field declarator with a value (as a field or static
// store) or an initializer block.
func (fc *fnCtx) initializer(n *syntax.Node) {
	if n == nil {
		return
	}
	if n.Type != "variable_declarator" {
		fc.stmt(n)
		return
	}
	name := fc.l.text(n.Child("name"))
	fi := fc.cls.fields[name]
	v := fc.exprTyped(n.Child("value"), fi.typ)
	if fi.static || fc.this == ir.NoVar {
		fc.b.StoreGlobal("java:"+fc.cls.cls.QName+"."+name, v, pos(n))
		return
	}
	fc.b.StoreField(ir.V(fc.this), name, v, pos(n))
}

// pushHandlers covers the blocks created from now on by the given catch
// entries and those of the enclosing try bodies.
func (fc *fnCtx) pushHandlers(entries []int, p ir.Pos) {
	all := append([]int(nil), entries...)
	if n := len(fc.handlers); n > 0 {
		all = append(all, fc.handlers[n-1]...)
	}
	fc.handlers = append(fc.handlers, all)
	fc.b.PushHandlers(all, p)
}

func (fc *fnCtx) popHandlers(p ir.Pos) {
	fc.handlers = fc.handlers[:len(fc.handlers)-1]
	fc.b.PopHandlers(p)
}
