package golang

import (
	"path"
	"strconv"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// fnCtx is the state of lowering one function body.
type fnCtx struct {
	fc       *fileCtx
	b        *ir.Builder
	parent   *fnCtx
	scopes   []map[string]ir.VarID
	kinds    kindTable
	defers   []deferred
	labels   map[string]int
	named    []ir.VarID // named results
	closures int
}

// deferred is a call registered by defer, emitted again at every exit.
type deferred struct {
	call *ir.Call
	pos  ir.Pos
}

// newFn starts a function; every function but the file's <module> code is
// listed in File.Funcs in source order.
func (fc *fileCtx) newFn(name, qname string, parent *fnCtx, n *syntax.Node) *fnCtx {
	b := ir.NewBuilder(fc.f, name, qname)
	b.Fn.Pos = pos(n)
	if name != "<module>" {
		fc.f.Funcs = append(fc.f.Funcs, b.Fn)
	}
	x := &fnCtx{fc: fc, b: b, parent: parent, scopes: []map[string]ir.VarID{{}}}
	if parent != nil {
		b.Fn.Parent = parent.b.Fn
	}
	return x
}

// lowerDecls lowers every top-level function, method and package variable.
func (fc *fileCtx) lowerDecls(root *syntax.Node) {
	var init *fnCtx
	for _, c := range root.Children {
		switch c.Type {
		case "function_declaration":
			name := fc.text(c.Child("name"))
			x := fc.newFn(name, fc.pkg+"."+name, nil, c)
			x.b.Fn.Static = true
			fc.funcs[name].fn = x.b.Fn
			x.body(c)
		case "method_declaration":
			fc.lowerMethod(c)
		case "var_declaration", "const_declaration":
			if c.Type == "const_declaration" && fc.allConstsInlined(c) {
				continue
			}
			if init == nil {
				base := path.Base(fc.f.Path)
				init = fc.newFn("<module>", fc.pkg+".<module:"+base+">", nil, root)
				fc.f.Init = init.b.Fn
			}
			init.globalDecl(c)
		}
	}
	if init != nil {
		init.finish(root)
	}
}

func (fc *fileCtx) allConstsInlined(decl *syntax.Node) bool {
	for _, s := range decl.Children {
		if s.Type != "const_spec" {
			continue
		}
		for _, nm := range s.ChildrenByField("name") {
			if fc.consts[fc.text(nm)] == nil {
				return false
			}
		}
	}
	return true
}

func (fc *fileCtx) lowerMethod(n *syntax.Node) {
	name := fc.text(n.Child("name"))
	tname := receiverTypeName(fc, n.Child("receiver"))
	cls := fc.class(tname, pos(n))
	x := fc.newFn(name, cls.QName+"."+name, nil, n)
	x.b.Fn.Class = cls
	cls.Methods = append(cls.Methods, x.b.Fn)
	if fi := fc.methods[tname+"."+name]; fi != nil {
		fi.fn = x.b.Fn
	}
	// The receiver.
	rname := "_"
	if recv := n.Child("receiver"); recv != nil {
		if p := recv.FirstOfType("parameter_declaration"); p != nil {
			if nm := p.Child("name"); nm != nil {
				rname = fc.text(nm)
			}
		}
	}
	id := x.b.This(rname, cls.QName)
	if rname != "_" {
		x.scopes[0][rname] = id
	}
	x.kinds.set(id, kStruct)
	x.body(n)
}

// body lowers parameters, results and the body of a function, method or
// closure.
func (x *fnCtx) body(n *syntax.Node) {
	fc := x.fc
	fc.params(x.b, n.Child("parameters"), x)
	res := n.Child("result")
	if rs := fc.results(res); len(rs) > 0 {
		x.b.Fn.Result = rs[0]
	}
	if res != nil && res.Type == "parameter_list" {
		for _, p := range res.Children {
			if p.Type != "parameter_declaration" {
				continue
			}
			t := p.Child("type")
			for _, nm := range p.ChildrenByField("name") {
				id := x.declare(fc.text(nm), fc.typeName(t))
				x.kinds.set(id, fc.typeKind(t))
				x.b.Assign(id, x.zero(t, pos(nm)), pos(nm))
				x.named = append(x.named, id)
			}
		}
	}
	// Parameters, results and the body's top level share one scope.
	if body := n.Child("body"); body != nil {
		x.stmts(body.Children)
	}
	x.finish(n)
}

// finish runs pending defers at the end of the body and closes the function.
func (x *fnCtx) finish(n *syntax.Node) {
	if x.b.Reachable() {
		x.runDefers(pos(n))
	}
	x.b.Finish(lower.EndPos(n))
}

// params declares the formal parameters of a signature.
func (fc *fileCtx) params(b *ir.Builder, pl *syntax.Node, x *fnCtx) {
	if pl == nil {
		return
	}
	for _, p := range pl.Children {
		if p.Type != "parameter_declaration" && p.Type != "variadic_parameter_declaration" {
			continue
		}
		t := p.Child("type")
		typ, k := fc.typeName(t), fc.typeKind(t)
		rest := p.Type == "variadic_parameter_declaration"
		if rest {
			k = kSlice
		}
		names := p.ChildrenByField("name")
		if len(names) == 0 {
			id := b.Param("_", typ, nil)
			b.Fn.Params[len(b.Fn.Params)-1].Rest = rest
			if x != nil {
				x.kinds.set(id, k)
			}
			continue
		}
		for _, nm := range names {
			name := fc.text(nm)
			id := b.Param(name, typ, nil)
			b.Fn.Params[len(b.Fn.Params)-1].Rest = rest
			if x != nil {
				x.kinds.set(id, k)
				if name != "_" {
					x.scopes[len(x.scopes)-1][name] = id
				}
			}
		}
	}
}

// closure lowers a func literal into a separate Func and returns its value.
func (x *fnCtx) closure(n *syntax.Node) ir.Value {
	top := x
	for top.parent != nil {
		top = top.parent
	}
	top.closures++
	qn := x.b.Fn.QName + "$func" + strconv.Itoa(top.closures)
	c := x.fc.newFn("<lambda>", qn, x, n)
	c.body(n)
	return x.b.Closure(c.b.Fn, pos(n))
}

// globalDecl lowers package-level var (and non-inlined const) declarations
// into stores of the globals, in the file's <module> function.
func (x *fnCtx) globalDecl(decl *syntax.Node) {
	x.eachDeclared(decl, func(nm, _ *syntax.Node, name string, v ir.Value) {
		x.b.StoreGlobal(x.fc.pkg+"."+name, v, pos(nm))
	})
}

// eachDeclared lowers the values of a var or const declaration and calls
// fn for every declared name but "_", with the spec's type node (or nil).
func (x *fnCtx) eachDeclared(decl *syntax.Node, fn func(nm, typ *syntax.Node, name string, v ir.Value)) {
	var specs []*syntax.Node
	if decl.Type == "var_declaration" {
		specs = varSpecs(decl)
	} else {
		for _, s := range decl.Children {
			if s.Type == "const_spec" {
				specs = append(specs, s)
			}
		}
	}
	for _, s := range specs {
		names := s.ChildrenByField("name")
		t := s.Child("type")
		var vals []*syntax.Node
		if v := s.Child("value"); v != nil {
			vals = v.NamedChildren()
		}
		values := x.rhsValues(vals, len(names), t)
		for i, nm := range names {
			if name := x.fc.text(nm); name != "_" {
				fn(nm, t, name, values[i])
			}
		}
	}
}

// scope handling: Go's block scopes, so that a := in an inner block does not
// replace the outer variable after the block.

func (x *fnCtx) push() { x.scopes = append(x.scopes, map[string]ir.VarID{}) }
func (x *fnCtx) pop()  { x.scopes = x.scopes[:len(x.scopes)-1] }

// declare creates a variable in the innermost scope.
func (x *fnCtx) declare(name, typ string) ir.VarID {
	id := x.b.Declare(name, typ)
	if name != "_" {
		x.scopes[len(x.scopes)-1][name] = id
	}
	return id
}

// lookup finds a variable by name in this function's scopes, then in the
// enclosing functions' (returning a Captured variable).
func (x *fnCtx) lookup(name string) (ir.VarID, bool) {
	for i := len(x.scopes) - 1; i >= 0; i-- {
		if id, ok := x.scopes[i][name]; ok {
			return id, true
		}
	}
	for p := x.parent; p != nil; p = p.parent {
		for i := len(p.scopes) - 1; i >= 0; i-- {
			if id, ok := p.scopes[i][name]; ok {
				typ := p.b.Fn.Vars[id].Type
				cid := x.b.Declare(name, typ)
				x.b.Fn.Vars[cid].Captured = true
				x.scopes[0][name] = cid
				x.kinds.set(cid, p.kinds.get(id))
				return cid, true
			}
		}
	}
	return 0, false
}

// runDefers emits the registered deferred calls, most recent first.
func (x *fnCtx) runDefers(p ir.Pos) {
	for i := len(x.defers) - 1; i >= 0; i-- {
		d := x.defers[i]
		c := *d.call
		c.Args = append([]ir.Value(nil), d.call.Args...)
		x.b.Emit(ir.Instr{Op: ir.OpCall, Dst: ir.NoVar, Call: &c, Pos: d.pos})
	}
}
