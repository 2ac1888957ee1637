package ruby

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
)

// classCtx is the lexical class context: the class or module whose body is
// being lowered, the module nesting for constant lookup, and the state of
// visibility declarations.
type classCtx struct {
	cls        *ir.Class
	nesting    []string // qualified names of the enclosing classes and modules, innermost last
	visibility string   // "", "private" or "protected" for the following defs
	moduleFn   bool     // after module_function: defs are singleton methods
	singleton  bool     // inside class << self
}

// fnState is the state of one function being lowered.
type fnState struct {
	l         *lowerer
	b         *ir.Builder
	parent    *fnState // enclosing function of a closure
	ctx       *classCtx
	classBody bool     // lowering class body code (self is the class)
	static    bool     // singleton method: self is the class
	self      ir.VarID // NoVar when self is not an object variable
	block     ir.VarID // the "&block" parameter, NoVar until needed
	isMethod  bool     // a def (may get a lazily declared block parameter)
	loops     int      // inline loops open (while, until, for, loop)
	procs     map[string]bool
	retries   []int // entry blocks of the begin bodies open, for retry
	redo      int   // first body block of a closure, for redo
}

func (fs *fnState) newClosureState(fn *ir.Builder) *fnState {
	return &fnState{l: fs.l, b: fn, parent: fs, ctx: fs.ctx, self: ir.NoVar, block: ir.NoVar, redo: -1, static: fs.static || fs.classBody}
}

// local finds a local variable by name: this function's, or (in a closure)
// an enclosing function's, which becomes a captured variable of every
// closure in between.
func (fs *fnState) local(name string) (ir.VarID, bool) {
	if v, ok := fs.b.Lookup(name); ok {
		return v, true
	}
	if fs.parent == nil {
		return ir.NoVar, false
	}
	if _, ok := fs.parent.local(name); !ok {
		return ir.NoVar, false
	}
	return fs.b.Captured(name, ""), true
}

// selfValue is the value of self: the receiver of an instance method (a
// captured "self" in its closures), or the class for class bodies and
// singleton methods (ok false then, with the class name in cls).
func (fs *fnState) selfValue() (v ir.Value, cls string, ok bool) {
	if fs.self != ir.NoVar {
		return ir.V(fs.self), "", true
	}
	if fs.parent != nil {
		if _, c, ok := fs.parent.selfValue(); ok {
			return ir.V(fs.b.Captured("self", c)), "", true
		}
	}
	if fs.ctx.cls != nil {
		return ir.None, fs.ctx.cls.QName, false
	}
	return ir.None, "", false
}

// selfType is the class of self in instance context.
func (fs *fnState) selfType() string {
	if fs.ctx.cls != nil {
		return fs.ctx.cls.QName
	}
	return ""
}

// blockParam returns the variable of the enclosing method's block ("&block"),
// declaring the parameter on first use.
func (fs *fnState) blockParam() (ir.VarID, bool) {
	if fs.block != ir.NoVar {
		return fs.block, true
	}
	if fs.isMethod {
		fs.block = fs.b.Param("&block", "Proc", nil)
		return fs.block, true
	}
	if fs.parent != nil {
		if _, ok := fs.parent.blockParam(); ok {
			return fs.b.Captured("&block", "Proc"), true
		}
	}
	return ir.NoVar, false
}

// className is the qualified name of the current class, or "" at top level.
func (fs *fnState) className() string {
	if fs.ctx.cls != nil {
		return fs.ctx.cls.QName
	}
	return ""
}

// qualifiedGlobal names a class-level variable (@@x, or @x outside methods).
func (fs *fnState) qualifiedGlobal(name string) string {
	if c := fs.className(); c != "" {
		return c + "::" + name
	}
	return name
}

// resolve resolves a constant path in the current nesting.
func (fs *fnState) resolve(t string) string { return fs.l.resolveConst(t, fs.ctx.nesting) }
