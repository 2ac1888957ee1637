package ruby

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// valueConsts are built-in constants that hold objects rather than name
// classes: calls on them are method calls on the loaded value.
var valueConsts = map[string]bool{"ENV": true, "ARGV": true, "ARGF": true, "STDIN": true, "STDOUT": true, "STDERR": true, "DATA": true}

// expr lowers an expression or statement and returns its value (meaningful
// only when want is set; control structures skip their result temporaries
// otherwise).
func (fs *fnState) expr(n *syntax.Node, want bool) ir.Value {
	b := fs.b
	p := pos(n)
	switch n.Type {
	case "identifier":
		name := fs.l.text(n)
		switch name { // keywords the grammar leaves as identifiers
		case "__FILE__":
			return ir.C(ir.Str(fs.l.path))
		case "__LINE__":
			return ir.C(ir.Int(int64(n.Row + 1)))
		}
		if v, ok := fs.local(name); ok {
			return ir.V(v)
		}
		if (name == "it" || (len(name) == 2 && name[0] == '_' && name[1] >= '1' && name[1] <= '9')) && fs.parent != nil && fs.isImplicitParam() {
			return ir.V(fs.b.Param(name, "", nil))
		}
		return fs.bareCall(n, name, nil, nil, nil)
	case "constant", "scope_resolution":
		if n.Type == "scope_resolution" && n.Child("scope") != nil && !isConstPath(n.Child("scope")) {
			// expr::Name on a computed scope
			fs.expr(n.Child("scope"), false)
		}
		return b.LoadGlobal(fs.resolve(fs.l.text(n)), "", p)
	case "self":
		if v, cls, ok := fs.selfValue(); ok {
			return v
		} else if cls != "" {
			return b.LoadGlobal(cls, "", p)
		}
		return b.LoadGlobal("main", "", p)
	case "instance_variable":
		name := fs.l.text(n)[1:]
		if v, _, ok := fs.selfValue(); ok && !fs.classBody {
			return b.LoadField(v, name, "", p)
		}
		return b.LoadGlobal(fs.qualifiedGlobal("@"+name), "", p)
	case "class_variable":
		return b.LoadGlobal(fs.qualifiedGlobal(fs.l.text(n)), "", p)
	case "global_variable":
		return b.LoadGlobal(fs.l.text(n), "", p)
	case "integer", "float", "rational", "complex", "nil", "true", "false", "simple_symbol", "hash_key_symbol",
		"character", "file", "line", "encoding":
		return ir.C(fs.literal(n))
	case "string", "chained_string", "delimited_symbol", "regex", "heredoc_beginning", "bare_string", "bare_symbol":
		return fs.stringValue(n)
	case "subshell":
		cmd := fs.stringValue(n)
		return b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallFunc, Name: "`", Args: []ir.Value{cmd}}, "String", p)
	case "array":
		return fs.arrayLit(n)
	case "string_array", "symbol_array":
		var elems []ir.Value
		for _, c := range n.NamedChildren() {
			elems = append(elems, fs.stringValue(c))
		}
		return b.MakeList("Array", elems, p)
	case "hash":
		return fs.hashLit(n)
	case "range":
		var bounds []ir.Value
		for _, f := range []string{"begin", "end"} {
			if c := n.Child(f); c != nil {
				bounds = append(bounds, fs.expr(c, true))
			}
		}
		return b.MakeList("Range", bounds, p)
	case "parenthesized_statements", "begin_block", "end_block", "block_body":
		return fs.body(n.Children, want)
	case "begin":
		return fs.beginBody(n, want)
	case "call":
		return fs.call(n)
	case "element_reference":
		return fs.elementRef(n)
	case "yield":
		return fs.yield(n)
	case "super":
		return fs.zsuper(n)
	case "lambda":
		return fs.closure(n, "<lambda>", n.Child("parameters"), n.Child("body"))
	case "assignment":
		return fs.assignment(n)
	case "operator_assignment":
		return fs.opAssign(n)
	case "binary":
		return fs.binary(n, want)
	case "unary", "not":
		return fs.unary(n)
	case "conditional":
		cons, alt := n.Child("consequence"), n.Child("alternative")
		return fs.branch(n, n.Child("condition"), false,
			func() ir.Value { return fs.exprOrNil(cons) }, func() ir.Value { return fs.exprOrNil(alt) }, want)
	case "if", "unless":
		return fs.ifNode(n, want)
	case "if_modifier", "unless_modifier":
		bd := n.Child("body")
		return fs.branch(n, n.Child("condition"), n.Type == "unless_modifier",
			func() ir.Value { return fs.exprOrNil(bd) }, nil, want)
	case "while", "until", "while_modifier", "until_modifier":
		bd := n.Child("body")
		fs.loop(n, n.Child("condition"), n.Type == "until" || n.Type == "until_modifier", func() {
			if bd != nil && (n.Type == "while" || n.Type == "until") {
				fs.body(bd.Children, false)
			} else if bd != nil {
				fs.expr(bd, false)
			}
		})
		return ir.C(ir.Null())
	case "for":
		fs.forLoop(n)
		return ir.C(ir.Null())
	case "case":
		return fs.caseWhen(n, want)
	case "case_match":
		return fs.caseIn(n, want)
	case "return", "next", "break", "redo", "retry":
		fs.jump(n)
		return ir.C(ir.Null())
	case "rescue_modifier":
		return fs.rescueModifier(n, want)
	case "class", "module":
		fs.classDecl(n)
		return ir.C(ir.Null())
	case "singleton_class":
		fs.singletonClass(n)
		return ir.C(ir.Null())
	case "method", "singleton_method":
		fn := fs.methodDecl(n)
		return ir.C(ir.Str(fn.Name))
	case "splat_argument", "hash_splat_argument", "block_argument":
		if c := n.NamedChildren(); len(c) > 0 {
			return fs.expr(c[0], true)
		}
		return ir.C(ir.Null())
	case "match_pattern", "test_pattern":
		v := fs.expr(n.Child("value"), true)
		if pat := n.Child("pattern"); pat != nil {
			fs.bindPattern(pat, v)
		}
		return b.Opaque([]ir.Value{v}, p)
	case "pair":
		k, v := fs.exprOrNil(n.Child("key")), fs.exprOrNil(n.Child("value"))
		return b.MakeMap("Hash", []ir.Value{k, v}, p)
	case "comment", "heredoc_body", "empty_statement", "uninterpreted", "alias", "undef":
		return ir.C(ir.Null())
	}
	// ERROR nodes and constructs without a model: evaluate the parts.
	var parts []ir.Value
	for _, c := range n.NamedChildren() {
		if c.Type != "comment" {
			parts = append(parts, fs.expr(c, true))
		}
	}
	return b.Opaque(parts, p)
}

func (fs *fnState) exprOrNil(n *syntax.Node) ir.Value {
	if n == nil {
		return ir.C(ir.Null())
	}
	return fs.expr(n, true)
}

// isImplicitParam reports whether the closure declared no parameters, so
// that `it` and _1.._9 name its implicit ones.
func (fs *fnState) isImplicitParam() bool {
	for _, p := range fs.b.Fn.Params {
		n := fs.b.Fn.Vars[p.Var].Name
		if n != "it" && (len(n) != 2 || n[0] != '_') {
			return false
		}
	}
	return true
}

func isConstPath(n *syntax.Node) bool {
	switch n.Type {
	case "constant":
		return true
	case "scope_resolution":
		s := n.Child("scope")
		return s == nil || isConstPath(s)
	}
	return false
}

// arrayLit lowers [a, *b, c]: a splat contributes some element of b.
func (fs *fnState) arrayLit(n *syntax.Node) ir.Value {
	var elems []ir.Value
	for _, c := range n.NamedChildren() {
		if c.Type == "comment" {
			continue
		}
		if c.Type == "splat_argument" {
			v := fs.expr(c, true)
			elems = append(elems, fs.b.LoadIndex(v, ir.None, "", pos(c)))
			continue
		}
		if c.Type == "pair" { // [key: v] is an array holding a hash
			elems = append(elems, fs.hashLit(&syntax.Node{Type: "hash", Children: []*syntax.Node{c}, Start: c.Start, End: c.End, Row: c.Row, EndRow: c.EndRow}))
			continue
		}
		elems = append(elems, fs.expr(c, true))
	}
	return fs.b.MakeList("Array", elems, pos(n))
}

// hashLit lowers {k => v, key: v, **other}.
func (fs *fnState) hashLit(n *syntax.Node) ir.Value {
	var kv []ir.Value
	var splats []ir.Value
	for _, c := range n.NamedChildren() {
		switch c.Type {
		case "pair":
			k := fs.hashKey(c.Child("key"))
			var v ir.Value
			if vn := c.Child("value"); vn != nil {
				v = fs.expr(vn, true)
			} else if k.IsConst() && k.Const.IsStr() { // {x:} shorthand
				v = fs.expr(&syntax.Node{Type: "identifier", Start: c.Child("key").Start, End: c.Child("key").End, Row: c.Row, EndRow: c.EndRow}, true)
			} else {
				v = ir.C(ir.Null())
			}
			kv = append(kv, k, v)
		case "hash_splat_argument":
			splats = append(splats, fs.expr(c, true))
		case "comment":
		default:
			fs.expr(c, false)
		}
	}
	m := fs.b.MakeMap("Hash", kv, pos(n))
	for _, s := range splats {
		m = fs.b.Call(&ir.Call{Kind: ir.CallMethod, Name: "merge", Recv: m, Args: []ir.Value{s}}, "Hash", pos(n))
	}
	return m
}

// hashKey lowers a pair key: `name:` and `:name` are the string "name".
func (fs *fnState) hashKey(k *syntax.Node) ir.Value {
	if k == nil {
		return ir.C(ir.Null())
	}
	if k.Type == "hash_key_symbol" || k.Type == "identifier" || k.Type == "constant" {
		return ir.C(ir.Str(fs.l.text(k)))
	}
	return fs.expr(k, true)
}

// binary lowers operators; && || and/or become branches when a side has
// effects, and << is the method call it is in Ruby.
func (fs *fnState) binary(n *syntax.Node, want bool) ir.Value {
	b := fs.b
	p := pos(n)
	op := fs.l.text(n.Child("operator"))
	left, right := n.Child("left"), n.Child("right")
	switch op {
	case "and", "&&", "or", "||":
		isAnd := op == "and" || op == "&&"
		if !fs.hasEffects(left) && !fs.hasEffects(right) {
			name := "||"
			if isAnd {
				name = "&&"
			}
			return b.Binary(name, fs.exprOrNil(left), fs.exprOrNil(right), p)
		}
		res := b.Temp("")
		b.Assign(res, fs.exprOrNil(left), p)
		rb, join := b.NewBlock(), b.NewBlock()
		if isAnd {
			b.If(ir.V(res), rb, join, p)
		} else {
			b.If(ir.V(res), join, rb, p)
		}
		b.SetBlock(rb)
		v := fs.exprOrNil(right)
		if b.Reachable() {
			b.Assign(res, v, p)
			b.Jump(join, p)
		}
		b.SetBlock(join)
		return ir.V(res)
	case "<<":
		recv := fs.exprOrNil(left)
		arg := fs.exprOrNil(right)
		return b.Call(&ir.Call{Kind: ir.CallMethod, Name: "<<", Recv: fs.typedRecv(recv, left), Args: []ir.Value{arg}}, "", p)
	}
	x := fs.exprOrNil(left)
	y := fs.exprOrNil(right)
	return b.Binary(op, x, y, p)
}

// unary lowers !x, not x, -x and defined?(x).
func (fs *fnState) unary(n *syntax.Node) ir.Value {
	b := fs.b
	p := pos(n)
	op := fs.l.text(n.Child("operator"))
	operand := n.Child("operand")
	if operand == nil {
		if c := n.NamedChildren(); len(c) > 0 {
			operand = c[len(c)-1]
		}
	}
	switch op {
	case "defined?":
		return b.Opaque(nil, p)
	case "not", "!":
		op = "!"
	case "-":
		if operand != nil && (operand.Type == "integer" || operand.Type == "float") {
			c := fs.literal(operand)
			if c.Kind == ir.ConstInt {
				return ir.C(ir.Int(-c.Int))
			}
			if c.Kind == ir.ConstFloat {
				return ir.C(ir.Float(-c.Float))
			}
		}
	}
	return b.Unary(op, fs.exprOrNil(operand), p)
}

// rescueModifier lowers `x rescue y`.
func (fs *fnState) rescueModifier(n *syntax.Node, want bool) ir.Value {
	b := fs.b
	p := pos(n)
	res := b.Temp("")
	handler, join := b.NewBlock(), b.NewBlock()
	if !b.Reachable() {
		b.SetBlock(b.NewBlock())
	}
	b.PushHandlers([]int{handler}, p)
	v := fs.exprOrNil(n.Child("body"))
	if b.Reachable() {
		b.Assign(res, v, p)
	}
	b.PopHandlers(p)
	if b.Reachable() {
		b.Jump(join, p)
	}
	b.SetBlock(handler)
	b.Catch(b.Temp(""), "StandardError", p)
	h := fs.exprOrNil(n.Child("handler"))
	if b.Reachable() {
		b.Assign(res, h, p)
		b.Jump(join, p)
	}
	b.SetBlock(join)
	return ir.V(res)
}

// hasEffects reports whether evaluating n may call something or assign.
func (fs *fnState) hasEffects(n *syntax.Node) bool {
	if n == nil {
		return false
	}
	switch n.Type {
	case "call", "yield", "super", "assignment", "operator_assignment", "subshell", "element_reference",
		"return", "break", "next", "redo", "retry", "lambda", "if", "unless", "case", "while", "until",
		"begin", "conditional", "rescue_modifier", "if_modifier", "unless_modifier":
		return true
	case "identifier":
		_, ok := fs.local(fs.l.text(n))
		return !ok
	}
	for _, c := range n.Children {
		if fs.hasEffects(c) {
			return true
		}
	}
	return false
}
