package ruby

import (
	"fmt"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// literalType is the class of a literal receiver.
var literalType = map[string]string{
	"string": "String", "chained_string": "String", "heredoc_beginning": "String", "array": "Array",
	"string_array": "Array", "symbol_array": "Array", "hash": "Hash", "integer": "Integer", "float": "Float",
	"simple_symbol": "Symbol", "delimited_symbol": "Symbol", "regex": "Regexp", "range": "Range",
}

// typedRecv gives a literal receiver a typed temporary so that models of
// String, Array, Hash... apply to it.
func (fs *fnState) typedRecv(v ir.Value, n *syntax.Node) ir.Value {
	for n != nil && n.Type == "parenthesized_statements" && len(n.NamedChildren()) == 1 {
		n = n.NamedChildren()[0]
	}
	if n == nil {
		return v
	}
	t := literalType[n.Type]
	if t == "" {
		return v
	}
	if v.IsVar() {
		fs.b.SetType(v.Var, t)
		return v
	}
	tmp := fs.b.Temp(t)
	fs.b.Assign(tmp, v, pos(n))
	return ir.V(tmp)
}

// call lowers a `call` node: receiver.method(args) { block }.
func (fs *fnState) call(n *syntax.Node) ir.Value {
	b := fs.b
	p := pos(n)
	recvN, methN, argsN, blockN := n.Child("receiver"), n.Child("method"), n.Child("arguments"), n.Child("block")
	name := ""
	if methN != nil {
		name = fs.l.text(methN)
	}
	if recvN == nil {
		if methN != nil && methN.Type == "super" {
			vals, names := fs.args(argsN)
			vals, names = fs.withBlock(vals, names, blockN)
			return b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallSuper, Name: fs.superName(), Args: vals, Names: names}, "", p)
		}
		return fs.bareCall(n, name, argsN, blockN, methN)
	}
	if fs.l.text(n.Child("operator")) == "&." {
		return fs.safeNav(n, recvN, name, argsN, blockN)
	}
	return fs.methodCall(n, recvN, name, argsN, blockN)
}

// methodCall lowers a call with a receiver.
func (fs *fnState) methodCall(n, recvN *syntax.Node, name string, argsN, blockN *syntax.Node) ir.Value {
	b := fs.b
	p := pos(n)
	// Constants naming classes and modules: static calls and constructors.
	if isConstPath(recvN) {
		q := fs.resolve(fs.l.text(recvN))
		if !fs.l.values[q] && !valueConsts[q] {
			if q == "Proc" && name == "new" && blockN != nil {
				return fs.blockClosure(blockN, "<lambda>")
			}
			vals, names := fs.args(argsN)
			vals, names = fs.withBlock(vals, names, blockN)
			if name == "new" {
				return b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallNew, Name: "<init>", Qual: q, Args: vals, Names: names}, q, p)
			}
			if name == "" {
				name = "call"
			}
			return b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallStatic, Name: name, Qual: q, Args: vals, Names: names}, "", p)
		}
	}
	if recvN.Type == "self" {
		if _, cls, ok := fs.selfValue(); !ok && cls != "" {
			vals, names := fs.args(argsN)
			vals, names = fs.withBlock(vals, names, blockN)
			if name == "new" {
				return b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallNew, Name: "<init>", Qual: cls, Args: vals, Names: names}, cls, p)
			}
			return b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallStatic, Name: name, Qual: cls, Args: vals, Names: names}, "", p)
		}
	}
	recv := fs.typedRecv(fs.expr(recvN, true), recvN)
	vals, names := fs.args(argsN)
	if blockN != nil && iterators[name] != "" {
		return fs.iterate(n, recv, name, vals, names, blockN)
	}
	vals, names = fs.withBlock(vals, names, blockN)
	// f.(x), and f.call(x) on a local holding a closure or block.
	if name == "" || (name == "call" && recvN.Type == "identifier" && fs.isProc(fs.l.text(recvN))) {
		return b.Call(&ir.Call{Kind: ir.CallDynamic, Recv: recv, Args: vals, Names: names}, "", p)
	}
	return b.Call(&ir.Call{Kind: ir.CallMethod, Name: name, Recv: recv, Args: vals, Names: names}, "", p)
}

// isProc reports whether a local (of this or an enclosing function) holds
// a closure.
func (fs *fnState) isProc(name string) bool {
	for s := fs; s != nil; s = s.parent {
		if s.procs[name] {
			return true
		}
		if _, ok := s.b.Lookup(name); ok && s.parent == nil {
			return false
		}
	}
	return false
}

// safeNav lowers recv&.m(args): the call runs only when recv is not nil.
func (fs *fnState) safeNav(n, recvN *syntax.Node, name string, argsN, blockN *syntax.Node) ir.Value {
	b := fs.b
	p := pos(n)
	recv := fs.expr(recvN, true)
	res := b.Temp("")
	callB, nilB, join := b.NewBlock(), b.NewBlock(), b.NewBlock()
	b.If(recv, callB, nilB, p)
	b.SetBlock(callB)
	vals, names := fs.args(argsN)
	vals, names = fs.withBlock(vals, names, blockN)
	v := b.Call(&ir.Call{Kind: ir.CallMethod, Name: name, Recv: recv, Args: vals, Names: names}, "", p)
	if b.Reachable() {
		b.Assign(res, v, p)
		b.Jump(join, p)
	}
	b.SetBlock(nilB)
	b.Assign(res, ir.C(ir.Null()), p)
	b.Jump(join, p)
	b.SetBlock(join)
	return ir.V(res)
}

// bareCall lowers a call without receiver, including the declarations and
// control forms Ruby writes as calls (raise, require, attr_accessor,
// include, private, lambda, loop).
func (fs *fnState) bareCall(n *syntax.Node, name string, argsN, blockN, methN *syntax.Node) ir.Value {
	b := fs.b
	p := pos(n)
	inClass := fs.classBody && fs.ctx.cls != nil
	switch name {
	case "raise", "fail":
		fs.raise(n, argsN)
		return ir.C(ir.Null())
	case "require", "require_relative", "load", "require_dependency":
		if argsN != nil {
			if a := argsN.NamedChildren(); len(a) == 1 && a[0].Type == "string" {
				if s, ok := fs.constString(a[0]); ok {
					fs.l.file.Imports = append(fs.l.file.Imports, ir.Import{Path: fs.l.requirePath(name, s)})
					return ir.C(ir.Bool(true))
				}
			}
		}
	case "lambda", "proc":
		if blockN != nil {
			return fs.blockClosure(blockN, "<lambda>")
		}
	case "loop":
		if blockN != nil && argsN == nil {
			bd := blockN.Child("body")
			fs.loop(n, nil, false, func() {
				if bd != nil {
					fs.beginBody(bd, false)
				}
			})
			return ir.C(ir.Null())
		}
	case "attr_accessor", "attr_reader", "attr_writer", "attr":
		if inClass {
			if name == "attr" {
				name = "attr_reader"
			}
			fs.accessors(name, argsN)
			return ir.C(ir.Null())
		}
	case "include", "extend", "prepend":
		if inClass {
			fs.mixins(argsN)
			return ir.C(ir.Null())
		}
	case "private", "protected", "public", "module_function", "private_class_method", "public_class_method":
		if inClass {
			fs.visibility(name, argsN)
			return ir.C(ir.Null())
		}
	case "define_method":
		if inClass && blockN != nil && argsN != nil {
			if a := argsN.NamedChildren(); len(a) == 1 {
				if mname, ok := fs.symbolName(a[0]); ok {
					c := fs.ctx.cls
					fn := fs.newFunc(mname, c.QName+"#"+mname, c, false, n, blockN.Child("parameters"), blockN.Child("body"))
					c.Methods = append(c.Methods, fn)
					return ir.C(ir.Str(mname))
				}
			}
		}
	case "block_given?":
		if v, ok := fs.blockParam(); ok {
			return b.Binary("!=", ir.V(v), ir.C(ir.Null()), p)
		}
	}
	vals, names := fs.args(argsN)
	vals, names = fs.withBlock(vals, names, blockN)
	if methN != nil && methN.Type == "constant" && argsN == nil && blockN == nil {
		return b.LoadGlobal(fs.resolve(name), "", p)
	}
	if _, cls, ok := fs.selfValue(); !ok && cls != "" && (fs.classBody || fs.static) {
		if name == "new" {
			return b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallNew, Name: "<init>", Qual: cls, Args: vals, Names: names}, cls, p)
		}
		if fs.classBody {
			return b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallStatic, Name: name, Qual: cls, Args: vals, Names: names}, "", p)
		}
	}
	if self, _, ok := fs.selfValue(); ok && !fs.classBody && fs.l.hasMethod(fs.selfType(), name, 0) {
		return b.Call(&ir.Call{Kind: ir.CallMethod, Name: name, Recv: self, Args: vals, Names: names}, "", p)
	}
	qual := ""
	if blockN == nil && (strings.HasSuffix(name, "_path") || strings.HasSuffix(name, "_url")) && !fs.l.defs[name] {
		qual = routeHelpers
	}
	return b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallFunc, Name: name, Qual: qual, Args: vals, Names: names}, "", p)
}

// routeHelpers qualifies Rails route helpers (see the package comment).
const routeHelpers = "ActionDispatch::Routing::UrlFor"

// raise lowers raise/fail as a throw: `raise Cls, msg` and `raise Cls.new`
// throw an instance of Cls, `raise "msg"` a RuntimeError, bare `raise`
// re-raises ($!).
func (fs *fnState) raise(n, argsN *syntax.Node) {
	b := fs.b
	p := pos(n)
	var args []*syntax.Node
	if argsN != nil {
		args = argsN.NamedChildren()
	}
	var v ir.Value
	switch {
	case len(args) == 0:
		v = b.LoadGlobal("$!", "", p)
	case isConstPath(args[0]):
		q := fs.resolve(fs.l.text(args[0]))
		var rest []ir.Value
		for _, a := range args[1:] {
			rest = append(rest, fs.expr(a, true))
		}
		v = b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallNew, Name: "<init>", Qual: q, Args: rest}, q, p)
	case args[0].Type == "string":
		msg := fs.expr(args[0], true)
		v = b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallNew, Name: "<init>", Qual: "RuntimeError", Args: []ir.Value{msg}}, "RuntimeError", p)
	default:
		v = fs.expr(args[0], true)
		for _, a := range args[1:] {
			fs.expr(a, false)
		}
	}
	b.Throw(v, p)
}

// args lowers an argument list into positional values and keyword names.
func (fs *fnState) args(argsN *syntax.Node) ([]ir.Value, []string) {
	if argsN == nil {
		return nil, nil
	}
	var vals []ir.Value
	var names []string
	named := false
	var extra []ir.Value // pairs whose keys are not constant
	for _, a := range argsN.NamedChildren() {
		switch a.Type {
		case "comment", "heredoc_body":
			continue
		case "pair":
			k := fs.hashKey(a.Child("key"))
			var v ir.Value
			if vn := a.Child("value"); vn != nil {
				v = fs.expr(vn, true)
			} else {
				kn := a.Child("key")
				v = fs.expr(&syntax.Node{Type: "identifier", Start: kn.Start, End: kn.End, Row: kn.Row, EndRow: kn.EndRow}, true)
			}
			if k.IsConst() && k.Const.IsStr() {
				vals, names, named = append(vals, v), append(names, k.Const.Str), true
			} else {
				extra = append(extra, k, v)
			}
		case "hash_splat_argument":
			vals, names, named = append(vals, fs.expr(a, true)), append(names, "**"), true
		case "block_argument":
			vals, names, named = append(vals, fs.blockArg(a)), append(names, "&block"), true
		default:
			vals, names = append(vals, fs.expr(a, true)), append(names, "")
		}
	}
	if len(extra) > 0 {
		vals, names = append(vals, fs.b.MakeMap("Hash", extra, pos(argsN))), append(names, "")
	}
	if !named {
		names = nil
	}
	return vals, names
}

// blockArg lowers &blk and &:sym arguments.
func (fs *fnState) blockArg(a *syntax.Node) ir.Value {
	c := a.NamedChildren()
	if len(c) == 0 {
		if v, ok := fs.blockParam(); ok {
			return ir.V(v)
		}
		return ir.C(ir.Null())
	}
	return fs.expr(c[0], true)
}

// withBlock appends a literal block as the "&block" argument.
func (fs *fnState) withBlock(vals []ir.Value, names []string, blockN *syntax.Node) ([]ir.Value, []string) {
	if blockN == nil {
		return vals, names
	}
	v := fs.blockClosure(blockN, "<block>")
	if names == nil {
		names = make([]string, len(vals))
	}
	return append(vals, v), append(names, "&block")
}

// blockClosure lowers a do/end or {} block as a closure value.
func (fs *fnState) blockClosure(blockN *syntax.Node, kind string) ir.Value {
	return fs.closure(blockN, kind, blockN.Child("parameters"), blockN.Child("body"))
}

// closure lowers a block or lambda body into a nested Func and emits the
// closure value.
func (fs *fnState) closure(n *syntax.Node, kind string, params, body *syntax.Node) ir.Value {
	l := fs.l
	l.closures++
	outer := fs.b.Fn
	suffix := "$block"
	if kind == "<lambda>" {
		suffix = "$lambda"
	}
	b := ir.NewBuilder(l.file, kind, fmt.Sprintf("%s%s%d", outer.QName, suffix, l.closures))
	b.Fn.Parent, b.Fn.Class, b.Fn.Pos = outer, fs.ctx.cls, pos(n)
	l.file.Funcs = append(l.file.Funcs, b.Fn)
	c := fs.newClosureState(b)
	c.params(params)
	// a lambda's body is a block node holding the body
	if body != nil && body.Type == "block" || body != nil && body.Type == "do_block" {
		body = body.Child("body")
	}
	first := b.NewBlock()
	b.Jump(first, pos(n))
	b.SetBlock(first)
	c.redo = first
	v := ir.C(ir.Null())
	if body != nil {
		if body.Type == "body_statement" {
			v = c.beginBody(body, true)
		} else {
			v = c.body(body.Children, true)
		}
	}
	if b.Reachable() {
		b.Return(v, pos(n))
	}
	b.Finish(pos(n))
	return fs.b.Closure(b.Fn, pos(n))
}

// yield calls the method's block.
func (fs *fnState) yield(n *syntax.Node) ir.Value {
	vals, names := fs.args(n.FirstOfType("argument_list"))
	blk, ok := fs.blockParam()
	recv := ir.C(ir.Null())
	if ok {
		recv = ir.V(blk)
	}
	return fs.b.Call(&ir.Call{Kind: ir.CallDynamic, Recv: recv, Args: vals, Names: names}, "", pos(n))
}

// zsuper lowers a bare `super`: the superclass method with the same
// arguments.
func (fs *fnState) zsuper(n *syntax.Node) ir.Value {
	var vals []ir.Value
	for _, p := range fs.b.Fn.Params {
		if fs.b.Fn.Vars[p.Var].Name != "&block" {
			vals = append(vals, ir.V(p.Var))
		}
	}
	return fs.b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallSuper, Name: fs.superName(), Args: vals}, "", pos(n))
}

// superName is the name super calls: the enclosing method's.
func (fs *fnState) superName() string {
	s := fs
	for s.parent != nil {
		s = s.parent
	}
	return strings.TrimSpace(s.b.Fn.Name)
}

// elementRef lowers a[i] (a[i, j] and a[] are calls of []).
func (fs *fnState) elementRef(n *syntax.Node) ir.Value {
	obj := n.Child("object")
	recv := fs.typedRecv(fs.exprOrNil(obj), obj)
	var idx []*syntax.Node
	for _, c := range n.NamedChildren() {
		if c != obj && c.Type != "comment" {
			idx = append(idx, c)
		}
	}
	if len(idx) == 1 && idx[0].Type != "splat_argument" && idx[0].Type != "pair" && idx[0].Type != "block_argument" {
		return fs.b.LoadIndex(recv, fs.expr(idx[0], true), "", pos(n))
	}
	argsN := &syntax.Node{Type: "argument_list", Children: idx, Start: n.Start, End: n.End, Row: n.Row, EndRow: n.EndRow}
	vals, names := fs.args(argsN)
	return fs.b.Call(&ir.Call{Kind: ir.CallMethod, Name: "[]", Recv: recv, Args: vals, Names: names}, "", pos(n))
}

// iterators are the Enumerable methods that call their block with the
// receiver's elements: "map" when the result collects the block's results,
// "elem" when it is one of the receiver's elements, "each" when it derives
// from the receiver.
var iterators = map[string]string{
	"each": "each", "each_with_index": "each", "each_with_object": "each", "each_value": "each", "each_pair": "each",
	"each_key": "each", "each_entry": "each", "each_slice": "each", "each_cons": "each", "reverse_each": "each",
	"select": "each", "filter": "each", "reject": "each", "find": "elem", "detect": "elem", "find_all": "each",
	"partition": "each", "group_by": "each", "sort_by": "each", "min_by": "elem", "max_by": "elem", "any?": "each",
	"all?": "each", "none?": "each", "count": "each", "find_index": "each", "take_while": "each", "drop_while": "each",
	"uniq": "each", "tally_by": "each", "chunk_while": "each", "each_line": "each", "sum": "map", "inject": "each",
	"reduce": "each",
	"map":    "map", "collect": "map", "flat_map": "map", "collect_concat": "map", "filter_map": "map",
	"transform_values": "map", "to_h": "map",
}

// iterate lowers a call of an Enumerable iterator with a literal block:
// besides the call itself (with the block as its "&block" argument), the
// block is called on some element of the receiver, as the iterator does,
// and for map-like iterators the result is a list of the block's results,
// for find-like ones the element.
func (fs *fnState) iterate(n *syntax.Node, recv ir.Value, name string, vals []ir.Value, names []string, blockN *syntax.Node) ir.Value {
	b := fs.b
	p := pos(n)
	blk := fs.blockClosure(blockN, "<block>")
	elem := b.LoadIndex(recv, ir.None, "", p)
	nparams := 1
	if ps := blockN.Child("parameters"); ps != nil && len(ps.NamedChildren()) > 1 {
		nparams = 2
	}
	args := []ir.Value{elem}
	if nparams == 2 {
		args = append(args, elem)
	}
	r := b.Call(&ir.Call{Kind: ir.CallDynamic, Recv: blk, Args: args}, "", p)
	if names == nil && len(vals) > 0 {
		names = make([]string, len(vals))
	}
	if names != nil || len(vals) == 0 {
		names = append(names, "&block")
	}
	res := b.Call(&ir.Call{Kind: ir.CallMethod, Name: name, Recv: recv, Args: append(vals, blk), Names: names}, "", p)
	switch iterators[name] {
	case "map":
		return b.MakeList("Array", []ir.Value{r}, p)
	case "elem":
		return elem
	}
	return res
}
