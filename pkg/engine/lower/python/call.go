package python

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// call lowers a call expression; see the package comment for how the
// target is classified.
func (l *lowerer) call(s *scope, n *syntax.Node) ir.Value {
	b := s.b
	fn, argsNode := n.Child("function"), n.Child("arguments")
	p := pos(n)
	if fn == nil {
		return b.Opaque(nil, p)
	}
	switch fn.Type {
	case "identifier":
		name := l.text(fn)
		ref := s.lookup(name)
		switch ref.kind {
		case nkTopFunc:
			args, names := l.args(s, argsNode)
			return b.Call(&ir.Call{Kind: ir.CallFunc, Recv: ir.None, Name: name, Args: args, Names: names}, "", p)
		case nkClass:
			args, names := l.args(s, argsNode)
			return b.Call(&ir.Call{Kind: ir.CallNew, Recv: ir.None, Name: "<init>", Qual: ref.qual, Args: args, Names: names}, ref.qual, p)
		case nkImport:
			args, names := l.args(s, argsNode)
			if capitalized(ref.qual) {
				return b.Call(&ir.Call{Kind: ir.CallNew, Recv: ir.None, Name: "<init>", Qual: ref.qual, Args: args, Names: names}, ref.qual, p)
			}
			mod, fname := splitLast(ref.qual)
			return b.Call(&ir.Call{Kind: ir.CallFunc, Recv: ir.None, Name: fname, Qual: mod, Args: args, Names: names}, "", p)
		case nkUnknown:
			args, names := l.args(s, argsNode)
			typ := ""
			if builtinTypes[name] {
				typ = name
			}
			return b.Call(&ir.Call{Kind: ir.CallFunc, Recv: ir.None, Name: name, Args: args, Names: names}, typ, p)
		}
		if ref.kind == nkLocal && ref.v == b.Fn.This && b.Fn.Vars[ref.v].Type != "" { // cls(...) in a class method
			q := b.Fn.Vars[ref.v].Type
			args, names := l.args(s, argsNode)
			return b.Call(&ir.Call{Kind: ir.CallNew, Name: "<init>", Qual: q, Recv: ir.None, Args: args, Names: names}, q, p)
		}
		callee := l.nameValue(s, name, pos(fn))
		args, names := l.args(s, argsNode)
		return b.Call(&ir.Call{Kind: ir.CallDynamic, Recv: callee, Args: args, Names: names}, "", p)
	case "attribute":
		obj, attr := fn.Child("object"), l.text(fn.Child("attribute"))
		if obj.Type == "call" && s.isSuper(obj) {
			name := attr
			if name == "__init__" {
				name = "<init>"
			}
			args, names := l.args(s, argsNode)
			return b.Call(&ir.Call{Kind: ir.CallSuper, Recv: ir.None, Name: name, Args: args, Names: names}, "", p)
		}
		if path := l.staticPath(s, obj); path != "" {
			args, names := l.args(s, argsNode)
			if capitalized(attr) && !capitalized(lastSegment(path)) {
				q := path + "." + attr
				return b.Call(&ir.Call{Kind: ir.CallNew, Recv: ir.None, Name: "<init>", Qual: q, Args: args, Names: names}, q, p)
			}
			return b.Call(&ir.Call{Kind: ir.CallStatic, Recv: ir.None, Name: attr, Qual: path, Args: args, Names: names}, "", p)
		}
		recv := l.expr(s, obj)
		args, names := l.args(s, argsNode)
		typ := methodType(valueType(b.Fn, recv), attr)
		return b.Call(&ir.Call{Kind: ir.CallMethod, Name: attr, Recv: recv, Args: args, Names: names}, typ, p)
	}
	callee := l.expr(s, fn)
	args, names := l.args(s, argsNode)
	return b.Call(&ir.Call{Kind: ir.CallDynamic, Recv: callee, Args: args, Names: names}, "", p)
}

// isSuper reports whether a call is the built-in super().
func (s *scope) isSuper(call *syntax.Node) bool {
	f := call.Child("function")
	return f != nil && f.Type == "identifier" && s.l.text(f) == "super" && s.lookup("super").kind == nkUnknown
}

func splitLast(q string) (string, string) {
	for i := len(q) - 1; i >= 0; i-- {
		if q[i] == '.' {
			return q[:i], q[i+1:]
		}
	}
	return "", q
}

// args lowers call arguments in source order; keyword arguments are named,
// *x is named "*" and **x "**".
func (l *lowerer) args(s *scope, n *syntax.Node) ([]ir.Value, []string) {
	if n == nil {
		return nil, nil
	}
	if n.Type == "generator_expression" {
		return []ir.Value{l.expr(s, n)}, nil
	}
	var vals []ir.Value
	var names []string
	named := false
	for _, c := range n.Children {
		if !c.Named || isNoise(c.Type) {
			continue
		}
		name := ""
		var v ir.Value
		switch c.Type {
		case "keyword_argument":
			name = l.text(c.Child("name"))
			v = l.expr(s, c.Child("value"))
		case "list_splat":
			name = "*"
			v = l.expr(s, c)
		case "dictionary_splat":
			name = "**"
			v = l.expr(s, c)
		default:
			v = l.expr(s, c)
		}
		if name != "" && !named {
			named = true
			names = make([]string, len(vals), len(vals)+4)
		}
		vals = append(vals, v)
		if named {
			names = append(names, name)
		}
	}
	return vals, names
}

// methodType is the result type of a built-in str or bytes method.
func methodType(recv, name string) string {
	switch recv {
	case "str":
		switch name {
		case "format", "format_map", "join", "upper", "lower", "strip", "lstrip", "rstrip", "replace", "title",
			"capitalize", "casefold", "center", "ljust", "rjust", "zfill", "swapcase", "expandtabs",
			"removeprefix", "removesuffix", "__mod__":
			return "str"
		case "encode":
			return "bytes"
		case "split", "rsplit", "splitlines":
			return "list"
		}
	case "bytes":
		if name == "decode" {
			return "str"
		}
	}
	return ""
}
