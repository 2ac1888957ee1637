package php

import (
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// call emits a call whose result goes to a new temporary. Only method and
// dynamic calls have a receiver.
func (f *fnLowerer) call(c *ir.Call, typ string, pos ir.Pos) ir.Value {
	if c.Kind != ir.CallMethod && c.Kind != ir.CallDynamic {
		c.Recv = ir.None
	}
	return f.b.Call(c, typ, pos)
}

// argValue returns the expression of an argument node (its name excluded).
func argValue(arg *syntax.Node) *syntax.Node {
	for _, c := range arg.Children {
		if c.Named && c.Field != "name" && c.Type != "comment" {
			return c
		}
	}
	return nil
}

// args lowers an argument list; callable reports a first-class callable
// `f(...)`.
func (f *fnLowerer) args(n *syntax.Node) (vals []ir.Value, names []string, callable bool) {
	if n == nil {
		return nil, nil, false
	}
	named := false
	for _, a := range n.Children {
		switch a.Type {
		case "variadic_placeholder":
			callable = true
		case "argument":
			e := argValue(a)
			if e == nil {
				continue
			}
			name := ""
			if k := a.Child("name"); k != nil {
				name, named = k.Text(f.l.src), true
			}
			vals = append(vals, f.expr(e))
			names = append(names, name)
		}
	}
	if !named {
		names = nil
	}
	return vals, names, callable
}

// funcCall lowers name(...), \ns\name(...) and $f(...).
func (f *fnLowerer) funcCall(n *syntax.Node) ir.Value {
	pos := posOf(n)
	callee := n.Child("function")
	if callee == nil {
		return f.b.Opaque(f.namedValues(n), pos)
	}
	if callee.Type != "name" && callee.Type != "qualified_name" {
		recv := f.expr(callee)
		args, names, callable := f.args(n.Child("arguments"))
		if callable {
			return recv
		}
		return f.call(&ir.Call{Kind: ir.CallDynamic, Recv: recv, Args: args, Names: names}, "", pos)
	}
	qual, name := f.l.scope.function(nameText(callee, f.l.src))
	args, names, callable := f.args(n.Child("arguments"))
	if callable {
		if qual != "" {
			return ir.C(ir.Str(qual + "\\" + name))
		}
		return ir.C(ir.Str(name))
	}
	c := &ir.Call{Kind: ir.CallFunc, Name: name, Qual: qual, Args: args, Names: names}
	if qual == "" {
		switch strings.ToLower(name) {
		case "exit", "die":
			return f.exit(name, args, pos)
		case "define":
			v := f.call(c, "", pos)
			if len(args) >= 2 && args[0].IsConst() && args[0].Const.Kind == ir.ConstStr {
				f.b.StoreGlobal(f.l.scope.constant(args[0].Const.Str), args[1], pos)
			}
			return v
		}
	}
	return f.call(c, "", pos)
}

// methodCall lowers $o->m(...) and $o?->m(...).
func (f *fnLowerer) methodCall(n *syntax.Node) ir.Value {
	pos := posOf(n)
	recv := f.exprOrNull(n.Child("object"))
	name := ""
	if nn := n.Child("name"); nn != nil {
		if nn.Type == "name" {
			name = nn.Text(f.l.src)
		} else {
			f.expr(nn)
		}
	}
	args, names, callable := f.args(n.Child("arguments"))
	if callable {
		return f.b.MakeList("array", []ir.Value{recv, ir.C(ir.Str(name))}, pos)
	}
	return f.call(&ir.Call{Kind: ir.CallMethod, Name: name, Recv: recv, Args: args, Names: names}, "", pos)
}

// staticCall lowers A::m(...), self::m(...), static::m(...) and
// parent::m(...).
func (f *fnLowerer) staticCall(n *syntax.Node) ir.Value {
	pos := posOf(n)
	scope := n.Child("scope")
	name := ""
	if nn := n.Child("name"); nn != nil && nn.Type == "name" {
		name = nn.Text(f.l.src)
	}
	if scope == nil {
		return f.b.Opaque(f.namedValues(n), pos)
	}
	var c *ir.Call
	switch scope.Type {
	case "relative_scope", "name", "qualified_name":
		written := nameText(scope, f.l.src)
		if strings.EqualFold(written, "parent") {
			if strings.EqualFold(name, "__construct") {
				name = "<init>"
			}
			c = &ir.Call{Kind: ir.CallSuper, Name: name, Qual: f.className(written)}
		} else {
			c = &ir.Call{Kind: ir.CallStatic, Name: name, Qual: f.className(written)}
		}
	default:
		c = &ir.Call{Kind: ir.CallMethod, Name: name, Recv: f.expr(scope)}
	}
	args, names, callable := f.args(n.Child("arguments"))
	if callable {
		if c.Kind == ir.CallMethod {
			return f.b.MakeList("array", []ir.Value{c.Recv, ir.C(ir.Str(name))}, pos)
		}
		return ir.C(ir.Str(c.Qual + "::" + name))
	}
	c.Args, c.Names = args, names
	return f.call(c, "", pos)
}

// newExpr lowers new A(...), new $cls(...) and anonymous classes.
func (f *fnLowerer) newExpr(n *syntax.Node) ir.Value {
	pos := posOf(n)
	var class *syntax.Node
	anonymous := false
	for _, c := range n.Children {
		switch c.Type {
		case "declaration_list":
			anonymous = true
		case "arguments", "comment", "base_clause", "class_interface_clause", "attribute_list":
		default:
			if c.Named && class == nil {
				class = c
			}
		}
	}
	args, names, _ := f.args(n.FirstOfType("arguments"))
	switch {
	case anonymous:
		cls := f.l.class(n, f)
		return f.call(&ir.Call{Kind: ir.CallNew, Name: "<init>", Qual: cls.QName, Args: args, Names: names}, cls.QName, pos)
	case class != nil && (class.Type == "name" || class.Type == "qualified_name" || class.Type == "relative_scope"):
		q := f.className(nameText(class, f.l.src))
		return f.call(&ir.Call{Kind: ir.CallNew, Name: "<init>", Qual: q, Args: args, Names: names}, q, pos)
	case class != nil:
		recv := f.expr(class)
		return f.call(&ir.Call{Kind: ir.CallDynamic, Name: "<init>", Recv: recv, Args: args, Names: names}, "", pos)
	}
	return f.b.Opaque(args, pos)
}

// lambda lowers an anonymous function or arrow function into a separate
// Func whose free variables are Captured, and returns the closure value.
func (f *fnLowerer) lambda(n *syntax.Node) ir.Value {
	pos := posOf(n)
	f.l.lambdas++
	g := f.l.newFunc("<lambda>", f.b.Fn.QName+"$lambda"+strconv.Itoa(f.l.lambdas), f.cls, f)
	g.parentClass = f.parentClass
	g.arrow = n.Type == "arrow_function"
	g.closure = !g.arrow
	g.uses = map[string]bool{}
	fn := g.b.Fn
	fn.Parent = f.b.Fn
	fn.Static = n.FirstOfType("static_modifier") != nil
	f.l.file.Funcs = append(f.l.file.Funcs, fn)
	g.signature(n)
	if u := n.FirstOfType("anonymous_function_use_clause"); u != nil {
		for _, c := range u.NamedChildren() {
			if c.Type == "variable_name" || c.Type == "by_ref" {
				name := varName(c, f.l.src)
				g.uses[name] = true
				g.b.Captured(name, "")
				g.assigned[name] = true
			}
		}
	}
	g.body(n.Child("body"))
	g.finish(pos)
	return f.b.Closure(fn, pos)
}

// match lowers a match expression into a chain of strict equality tests;
// without a default arm an unmatched value throws UnhandledMatchError.
func (f *fnLowerer) match(n *syntax.Node) ir.Value {
	pos := posOf(n)
	subj := f.exprOrNull(n.Child("condition"))
	res := f.b.Temp("")
	end := f.b.NewBlock()
	var deflt *syntax.Node
	if body := n.Child("body"); body != nil {
		for _, arm := range body.Children {
			switch arm.Type {
			case "match_default_expression":
				deflt = arm
			case "match_conditional_expression":
				target := f.b.NewBlock()
				if list := arm.Child("conditional_expressions"); list != nil {
					for _, c := range namedOf(list) {
						eq := f.b.Binary("===", subj, f.expr(c), posOf(c))
						then, els := f.branch(eq, posOf(c))
						f.b.SetBlock(then)
						f.b.Jump(target, posOf(c))
						f.b.SetBlock(els)
					}
				}
				next := f.b.Current()
				f.b.SetBlock(target)
				f.armResult(arm, res, end)
				if next >= 0 {
					f.b.SetBlock(next)
				}
			}
		}
	}
	if deflt != nil {
		f.armResult(deflt, res, end)
	} else {
		e := f.call(&ir.Call{Kind: ir.CallNew, Name: "<init>", Qual: "UnhandledMatchError"}, "UnhandledMatchError", pos)
		f.b.Throw(e, pos)
	}
	f.b.SetBlock(end)
	return ir.V(res)
}

// armResult assigns a match arm's value to res and jumps to end.
func (f *fnLowerer) armResult(arm *syntax.Node, res ir.VarID, end int) {
	v := f.exprOrNull(arm.Child("return_expression"))
	if f.b.Reachable() {
		f.b.Assign(res, v, posOf(arm))
		f.b.Jump(end, posOf(arm))
	}
}
