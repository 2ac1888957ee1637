package golang

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// builtinFuncs are Go's predeclared functions. append, copy, new, make and
// panic are lowered to IR operations; the others are plain calls with Qual "".
var builtinFuncs = map[string]bool{
	"append": true, "cap": true, "clear": true, "close": true, "complex": true, "copy": true, "delete": true,
	"imag": true, "len": true, "make": true, "max": true, "min": true, "new": true, "panic": true,
	"print": true, "println": true, "real": true, "recover": true,
}

// argNodes returns the argument expressions of a call and whether the last
// one is spread (f(xs...)).
func (x *fnCtx) argNodes(n *syntax.Node) ([]*syntax.Node, bool) {
	al := n.Child("arguments")
	if al == nil {
		return nil, false
	}
	var out []*syntax.Node
	spread := false
	for _, c := range al.Children {
		if !c.Named || c.Type == "comment" {
			continue
		}
		if c.Type == "variadic_argument" {
			spread = true
			if inner := firstNamed(c); inner != nil {
				c = inner
			}
		}
		out = append(out, c)
	}
	if len(out) > 0 && !spread {
		last := out[len(out)-1]
		if last.End+3 <= al.End && string(x.fc.src[last.End:last.End+3]) == "..." {
			spread = true
		}
	}
	return out, spread
}

// call lowers a call expression.
func (x *fnCtx) call(n *syntax.Node) ir.Value {
	fnNode := n.Child("function")
	for fnNode != nil && fnNode.Type == "parenthesized_expression" {
		inner := firstNamed(fnNode)
		if inner == nil {
			break
		}
		fnNode = inner
	}
	if fnNode == nil {
		return x.b.Opaque(nil, pos(n))
	}
	args, _ := x.argNodes(n)
	fc := x.fc
	// Conversions.
	if isTypeExpr(fnNode) && len(args) == 1 {
		return x.cast(fnNode, x.expr(args[0]), pos(n))
	}
	if fnNode.Type == "identifier" {
		name := fc.text(fnNode)
		if _, local := x.lookup(name); !local && fc.funcs[name] == nil && fc.types[name] == nil {
			if builtinFuncs[name] {
				if v, ok := x.builtin(name, n); ok {
					return v
				}
			}
			if _, ok := builtinTypes[name]; ok && len(args) == 1 {
				return x.cast(fnNode, x.expr(args[0]), pos(n))
			}
		}
		if _, local := x.lookup(name); !local && fc.types[name] != nil && len(args) == 1 {
			return x.cast(fnNode, x.expr(args[0]), pos(n))
		}
	}
	c, typ, _ := x.buildCall(n)
	v := x.b.Call(c, typ, pos(n))
	if typ != "" {
		if k, ok := builtinTypes[typ]; ok {
			x.kinds.set(v.Var, k)
		} else if ti := x.localTypeByName(typ); ti != nil {
			x.kinds.set(v.Var, ti.kind)
		}
	}
	return v
}

func (x *fnCtx) localTypeByName(q string) *typeInfo {
	if len(q) > len(x.fc.pkg)+1 && q[:len(x.fc.pkg)+1] == x.fc.pkg+"." {
		return x.fc.types[q[len(x.fc.pkg)+1:]]
	}
	return nil
}

// buildCall evaluates a call's receiver or callee and arguments and returns
// the Call (not yet emitted) with its result type when the callee is
// declared in the file. ok is false when the callee is a built-in that must
// be lowered by call.
func (x *fnCtx) buildCall(n *syntax.Node) (*ir.Call, string, bool) {
	fc := x.fc
	fnNode := n.Child("function")
	for fnNode != nil && fnNode.Type == "parenthesized_expression" && firstNamed(fnNode) != nil {
		fnNode = firstNamed(fnNode)
	}
	c := &ir.Call{Recv: ir.None}
	typ := ""
	ok := true
	switch {
	case fnNode == nil:
		c.Kind = ir.CallDynamic
		c.Recv = x.b.Opaque(nil, pos(n))
	case fnNode.Type == "identifier":
		name := fc.text(fnNode)
		if id, local := x.lookup(name); local {
			c.Kind, c.Recv = ir.CallDynamic, ir.V(id)
			break
		}
		if _, global := fc.globals[name]; global && fc.funcs[name] == nil {
			// A package variable of the file holding a function value.
			c.Kind, c.Recv = ir.CallDynamic, x.b.LoadGlobal(fc.pkg+"."+name, fc.globals[name], pos(fnNode))
			break
		}
		c.Kind, c.Name = ir.CallFunc, name
		switch {
		case fc.funcs[name] != nil:
			c.Qual = fc.pkg
			if rs := fc.funcs[name].results; len(rs) > 0 {
				typ = rs[0]
			}
		case builtinFuncs[name]:
			if name == "len" || name == "cap" {
				typ = "int"
			}
			ok = name != "append" && name != "copy" && name != "new" && name != "make" && name != "panic"
		default:
			c.Qual = x.globalName(name)
			c.Qual = c.Qual[:len(c.Qual)-len(name)-1]
		}
	case fnNode.Type == "selector_expression":
		op, field := fnNode.Child("operand"), fc.text(fnNode.Child("field"))
		c.Name = field
		if p := x.importOf(op); p != "" {
			c.Kind, c.Qual = ir.CallStatic, p
			break
		}
		c.Kind = ir.CallMethod
		c.Recv = x.expr(op)
		if tname, ti := x.localType(c.Recv); ti != nil || tname != "" {
			if fi := fc.methods[tname+"."+field]; fi != nil && len(fi.results) > 0 {
				typ = fi.results[0]
			}
		}
	case fnNode.Type == "index_expression" && fnNode.Child("operand") != nil &&
		fnNode.Child("operand").Type == "identifier" && fc.funcs[fc.text(fnNode.Child("operand"))] != nil:
		// An explicit instantiation of a generic function: f[int](x).
		name := fc.text(fnNode.Child("operand"))
		c.Kind, c.Name, c.Qual = ir.CallFunc, name, fc.pkg
		if rs := fc.funcs[name].results; len(rs) > 0 {
			typ = rs[0]
		}
	default:
		c.Kind = ir.CallDynamic
		c.Recv = x.expr(fnNode)
	}
	args, spread := x.argNodes(n)
	for i, a := range args {
		if isTypeExpr(a) {
			continue
		}
		v := x.expr(a)
		if spread && i == len(args)-1 && x.kindOf(v) == kSlice {
			// f(xs...) passes the elements.
			v = x.b.LoadIndex(v, ir.None, x.elemType(v), pos(a))
		}
		c.Args = append(c.Args, v)
	}
	return c, typ, ok
}

// builtin lowers the built-in functions that are IR operations.
func (x *fnCtx) builtin(name string, n *syntax.Node) (ir.Value, bool) {
	b := x.b
	p := pos(n)
	args, spread := x.argNodes(n)
	switch name {
	case "append":
		if len(args) == 0 {
			return ir.None, false
		}
		s := x.expr(args[0])
		if !s.IsVar() {
			s = b.MakeList("", nil, p)
		}
		x.kinds.set(s.Var, kSlice)
		for i, a := range args[1:] {
			v := x.expr(a)
			if spread && i == len(args)-2 {
				v = b.LoadIndex(v, ir.None, x.elemType(v), pos(a))
			}
			b.StoreIndex(s, ir.None, v, pos(a))
		}
		return s, true
	case "copy":
		if len(args) != 2 {
			return ir.None, false
		}
		dst, src := x.expr(args[0]), x.expr(args[1])
		b.StoreIndex(dst, ir.None, b.LoadIndex(src, ir.None, x.elemType(src), p), p)
		return b.Opaque(nil, p), true
	case "new":
		if len(args) != 1 {
			return ir.None, false
		}
		t := args[0]
		switch x.fc.typeKind(t) {
		case kString, kNumber, kBool, kSlice, kMap, kChan:
			return x.zero(t, p), true
		}
		v := b.MakeMap(x.fc.typeName(t), nil, p)
		x.kinds.set(v.Var, kStruct)
		return v, true
	case "make":
		if len(args) == 0 {
			return ir.None, false
		}
		for _, a := range args[1:] {
			x.expr(a)
		}
		return x.zero(args[0], p), true
	case "panic":
		v := ir.C(ir.Null())
		if len(args) > 0 {
			v = x.expr(args[0])
		}
		x.runDefers(p)
		b.Throw(v, p)
		return ir.C(ir.Null()), true
	}
	return ir.None, false
}
