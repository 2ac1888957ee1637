package python

import (
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// expr lowers an expression and returns its value (a constant, a variable
// or a new temporary).
func (l *lowerer) expr(s *scope, n *syntax.Node) ir.Value {
	if n == nil {
		return ir.None
	}
	b := s.b
	switch n.Type {
	case "identifier":
		return l.nameValue(s, l.text(n), pos(n))
	case "string":
		return l.str(s, n)
	case "concatenated_string":
		return l.concatenated(s, n)
	case "integer":
		return intConst(l.text(n))
	case "float":
		return floatConst(l.text(n))
	case "true":
		return ir.C(ir.Bool(true))
	case "false":
		return ir.C(ir.Bool(false))
	case "none", "ellipsis":
		return ir.C(ir.Null())
	case "parenthesized_expression", "type", "await":
		for _, c := range named(n) {
			return l.expr(s, c)
		}
		return ir.None
	case "attribute":
		return l.attribute(s, n)
	case "subscript":
		return l.subscript(s, n)
	case "call":
		return l.call(s, n)
	case "binary_operator":
		return l.binary(s, n)
	case "boolean_operator":
		return l.boolOp(s, n)
	case "comparison_operator":
		return l.compare(s, n)
	case "not_operator":
		return b.Unary("not", l.expr(s, n.Child("argument")), pos(n))
	case "unary_operator":
		v := l.expr(s, n.Child("argument"))
		op := l.text(n.Child("operator"))
		if op == "-" && v.IsConst() && v.Const.IsNumber() {
			return negate(v)
		}
		if op == "+" && v.IsConst() && v.Const.IsNumber() {
			return v
		}
		return b.Unary(op, v, pos(n))
	case "conditional_expression":
		return l.conditional(s, n)
	case "lambda":
		return l.lambda(s, n)
	case "list", "tuple", "set", "expression_list", "pattern_list":
		return l.sequence(s, n)
	case "dictionary":
		return l.dict(s, n)
	case "list_comprehension", "set_comprehension", "generator_expression", "dictionary_comprehension":
		return l.comprehension(s, n)
	case "named_expression":
		v := l.expr(s, n.Child("value"))
		name := l.text(n.Child("name"))
		s.assignName(name, v, pos(n))
		return v
	case "yield":
		return l.yield(s, n)
	case "assignment":
		return l.assign(s, n)
	case "augmented_assignment":
		l.augAssign(s, n)
		return ir.None
	case "list_splat", "dictionary_splat", "keyword_argument":
		for _, c := range named(n) {
			if c.Field != "name" {
				return l.expr(s, c)
			}
		}
		return ir.None
	case "slice":
		return l.slice(s, n)
	case "comment", "line_continuation":
		return ir.None
	}
	// anything else (error fragments, newer syntax): its operands flow
	var args []ir.Value
	for _, c := range named(n) {
		if !isNoise(c.Type) {
			args = append(args, l.expr(s, c))
		}
	}
	return b.Opaque(args, pos(n))
}

// intConst parses a Python integer literal.
func intConst(t string) ir.Value {
	t = strings.TrimRight(t, "lL")
	if i, err := strconv.ParseInt(t, 0, 64); err == nil {
		return ir.C(ir.Int(i))
	}
	if len(t) > 1 && t[0] == '0' && t[1] >= '0' && t[1] <= '9' { // Python 2 octal
		if i, err := strconv.ParseInt(t[1:], 8, 64); err == nil {
			return ir.C(ir.Int(i))
		}
	}
	f, _ := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64)
	return ir.C(ir.Float(f))
}

// floatConst parses a float (or imaginary) literal.
func floatConst(t string) ir.Value {
	t = strings.TrimRight(strings.ReplaceAll(t, "_", ""), "jJ")
	f, _ := strconv.ParseFloat(t, 64)
	return ir.C(ir.Float(f))
}

// nameValue reads a name.
func (l *lowerer) nameValue(s *scope, name string, p ir.Pos) ir.Value {
	b := s.b
	ref := s.lookup(name)
	switch ref.kind {
	case nkLocal:
		return ir.V(ref.v)
	case nkGlobal:
		return b.LoadGlobal(ref.qual, ref.typ, p)
	case nkImport, nkModule, nkClass:
		return b.LoadGlobal(ref.qual, "", p)
	case nkTopFunc:
		return l.funcValue(s, name, p)
	}
	switch name {
	case "True":
		return ir.C(ir.Bool(true))
	case "False":
		return ir.C(ir.Bool(false))
	case "None":
		return ir.C(ir.Null())
	}
	return b.LoadGlobal(name, "", p)
}

// funcValue is a module-level function used as a value: a closure value of
// that function (patched after the whole file is lowered when the function
// comes later in the file).
func (l *lowerer) funcValue(s *scope, name string, p ir.Pos) ir.Value {
	b := s.b
	fn := l.topFuncs[name]
	v := b.Closure(fn, p)
	if fn == nil {
		blk := b.Fn.Blocks[b.Current()]
		l.fixups = append(l.fixups, fixup{fn: b.Fn, block: blk.ID, instr: len(blk.Instrs) - 1, name: name})
	}
	return v
}

// staticPath resolves an expression naming a module, an imported class or a
// class of the file (possibly through a chain of lower-case attributes of a
// module) to its qualified name, or "".
func (l *lowerer) staticPath(s *scope, n *syntax.Node) string {
	switch n.Type {
	case "identifier":
		ref := s.lookup(l.text(n))
		switch {
		case ref.kind == nkModule, ref.kind == nkClass:
			return ref.qual
		case ref.kind == nkImport && capitalized(ref.qual):
			return ref.qual
		}
	case "attribute":
		base := l.staticPath(s, n.Child("object"))
		if base == "" || capitalized(lastSegment(base)) {
			return ""
		}
		return base + "." + l.text(n.Child("attribute"))
	}
	return ""
}

// attribute lowers obj.attr: a member of a module or class is a global, any
// other attribute a field load.
func (l *lowerer) attribute(s *scope, n *syntax.Node) ir.Value {
	obj, attr := n.Child("object"), l.text(n.Child("attribute"))
	if obj.Type == "identifier" {
		if p := l.staticPath(s, obj); p != "" {
			return s.b.LoadGlobal(p+"."+attr, "", pos(n))
		}
	}
	v := l.expr(s, obj)
	return s.b.LoadField(v, attr, "", pos(n))
}

// subscript lowers obj[i] (OpLoadIndex) and obj[a:b] (a __getitem__ call
// with a slice).
func (l *lowerer) subscript(s *scope, n *syntax.Node) ir.Value {
	b := s.b
	obj := l.expr(s, n.Child("value"))
	typ := elemType(b.Fn, obj)
	if subs := n.ChildrenByField("subscript"); len(subs) == 1 && subs[0].Type == "slice" {
		sl := l.slice(s, subs[0])
		return b.Call(&ir.Call{Kind: ir.CallMethod, Name: "__getitem__", Recv: obj, Args: []ir.Value{sl}}, valueType(b.Fn, obj), pos(n))
	}
	return b.LoadIndex(obj, l.index(s, n), typ, pos(n))
}

// index lowers the index of a subscript node (a tuple for a[i, j]).
func (l *lowerer) index(s *scope, n *syntax.Node) ir.Value {
	subs := n.ChildrenByField("subscript")
	switch len(subs) {
	case 0:
		return ir.None
	case 1:
		return l.expr(s, subs[0])
	}
	vals := make([]ir.Value, len(subs))
	for i, c := range subs {
		vals[i] = l.expr(s, c)
	}
	return s.b.MakeList("tuple", vals, pos(n))
}

// slice lowers start:stop:step into a call of the built-in slice. The parts
// are told apart by the colons between the children.
func (l *lowerer) slice(s *scope, n *syntax.Node) ir.Value {
	parts := [3]ir.Value{ir.C(ir.Null()), ir.C(ir.Null()), ir.C(ir.Null())}
	at, colons := n.Start, 0
	for _, c := range named(n) {
		colons += strings.Count(string(l.src[at:c.Start]), ":")
		if colons < 3 {
			parts[colons] = l.expr(s, c)
		}
		at = c.End
	}
	return s.b.Call(&ir.Call{Kind: ir.CallFunc, Recv: ir.None, Name: "slice", Args: parts[:]}, "slice", pos(n))
}

// binary lowers arithmetic, with "..." % args as a formatting call.
func (l *lowerer) binary(s *scope, n *syntax.Node) ir.Value {
	op := l.text(n.Child("operator"))
	left, right := n.Child("left"), n.Child("right")
	lv := l.expr(s, left)
	if op == "%" && valueType(s.b.Fn, lv) == "str" {
		var args []ir.Value
		if right.Type == "tuple" || (right.Type == "parenthesized_expression" && right.FirstOfType("tuple") != nil) {
			t := right
			if t.Type == "parenthesized_expression" {
				t = t.FirstOfType("tuple")
			}
			for _, c := range named(t) {
				args = append(args, l.expr(s, c))
			}
		} else {
			args = []ir.Value{l.expr(s, right)}
		}
		return s.b.Call(&ir.Call{Kind: ir.CallMethod, Name: "__mod__", Recv: lv, Args: args}, "str", pos(n))
	}
	return l.binop(s, op, lv, l.expr(s, right), pos(n))
}

// binop emits x op y, folding the concatenation of two string constants.
func (l *lowerer) binop(s *scope, op string, x, y ir.Value, p ir.Pos) ir.Value {
	if op == "+" && x.IsConst() && y.IsConst() && x.Const.IsStr() && y.Const.IsStr() {
		return ir.C(ir.Str(x.Const.Str + y.Const.Str))
	}
	v := s.b.Binary(op, x, y, p)
	if op == "+" || op == "*" || op == "%" {
		if tx, ty := valueType(s.b.Fn, x), valueType(s.b.Fn, y); tx == "str" || (op == "+" && ty == "str") {
			s.b.SetType(v.Var, "str")
		}
	}
	return v
}

// hasCall reports whether evaluating an expression may run code: a call,
// an await, a yield, an assignment expression or a lambda body excluded.
func hasCall(n *syntax.Node) bool {
	switch n.Type {
	case "call", "await", "yield", "named_expression", "list_comprehension", "set_comprehension",
		"dictionary_comprehension", "generator_expression", "subscript":
		return true
	case "lambda":
		return false
	}
	for _, c := range n.Children {
		if c.Named && hasCall(c) {
			return true
		}
	}
	return false
}

// boolOp lowers and/or: short-circuit branches when an operand has a call,
// else an OpBinary "&&" / "||". The value is the deciding operand, as in
// Python.
func (l *lowerer) boolOp(s *scope, n *syntax.Node) ir.Value {
	b := s.b
	left, right := n.Child("left"), n.Child("right")
	op := "&&"
	if l.text(n.Child("operator")) == "or" {
		op = "||"
	}
	if !hasCall(left) && !hasCall(right) {
		return b.Binary(op, l.expr(s, left), l.expr(s, right), pos(n))
	}
	res := b.Temp("")
	b.Assign(res, l.expr(s, left), pos(left))
	rhs, exit := b.NewBlock(), b.NewBlock()
	if op == "&&" {
		b.If(ir.V(res), rhs, exit, pos(n))
	} else {
		b.If(ir.V(res), exit, rhs, pos(n))
	}
	b.SetBlock(rhs)
	b.Assign(res, l.expr(s, right), pos(right))
	b.Jump(exit, pos(n))
	b.SetBlock(exit)
	return ir.V(res)
}

// compare lowers a (possibly chained) comparison: a < b < c is
// (a < b) and (b < c), with b evaluated once.
func (l *lowerer) compare(s *scope, n *syntax.Node) ir.Value {
	b := s.b
	var operands []*syntax.Node
	var ops []string
	for _, c := range n.Children {
		if c.Field == "operators" {
			ops = append(ops, strings.Join(strings.Fields(l.text(c)), " "))
		} else if c.Named && !isNoise(c.Type) {
			operands = append(operands, c)
		}
	}
	if len(operands) < 2 || len(ops) != len(operands)-1 {
		var args []ir.Value
		for _, c := range operands {
			args = append(args, l.expr(s, c))
		}
		return b.Opaque(args, pos(n))
	}
	prev := l.expr(s, operands[0])
	if len(ops) == 1 {
		return b.Binary(ops[0], prev, l.expr(s, operands[1]), pos(n))
	}
	effects := false
	for _, c := range operands[1:] {
		effects = effects || hasCall(c)
	}
	if !effects {
		var acc ir.Value
		for i, op := range ops {
			next := l.expr(s, operands[i+1])
			c := b.Binary(op, prev, next, pos(n))
			if i == 0 {
				acc = c
			} else {
				acc = b.Binary("&&", acc, c, pos(n))
			}
			prev = next
		}
		return acc
	}
	res := b.Temp("bool")
	exit := b.NewBlock()
	for i, op := range ops {
		next := l.expr(s, operands[i+1])
		b.Assign(res, b.Binary(op, prev, next, pos(n)), pos(n))
		if i < len(ops)-1 {
			more := b.NewBlock()
			b.If(ir.V(res), more, exit, pos(n))
			b.SetBlock(more)
		}
		prev = next
	}
	b.Jump(exit, pos(n))
	b.SetBlock(exit)
	return ir.V(res)
}

// conditional lowers `x if c else y` as a branch.
func (l *lowerer) conditional(s *scope, n *syntax.Node) ir.Value {
	b := s.b
	cs := named(n)
	if len(cs) < 3 {
		return b.Opaque(nil, pos(n))
	}
	c := l.expr(s, cs[1])
	res := b.Temp("")
	then, els, exit := b.NewBlock(), b.NewBlock(), b.NewBlock()
	b.If(c, then, els, pos(cs[1]))
	b.SetBlock(then)
	tv := l.expr(s, cs[0])
	b.Assign(res, tv, pos(cs[0]))
	b.Jump(exit, pos(n))
	b.SetBlock(els)
	ev := l.expr(s, cs[2])
	b.Assign(res, ev, pos(cs[2]))
	b.Jump(exit, pos(n))
	b.SetBlock(exit)
	if t := valueType(b.Fn, tv); t != "" && t == valueType(b.Fn, ev) {
		b.SetType(res, t)
	}
	return ir.V(res)
}

// sequence lowers list, tuple and set displays; starred elements are added
// with extend (update for sets).
func (l *lowerer) sequence(s *scope, n *syntax.Node) ir.Value {
	b := s.b
	typ := "tuple"
	switch n.Type {
	case "list":
		typ = "list"
	case "set":
		typ = "set"
	}
	var elems []ir.Value
	var splats []ir.Value
	for _, c := range named(n) {
		switch c.Type {
		case "comment", "line_continuation":
		case "list_splat", "list_splat_pattern":
			splats = append(splats, l.expr(s, c))
		default:
			elems = append(elems, l.expr(s, c))
		}
	}
	v := b.MakeList(typ, elems, pos(n))
	add := "extend"
	if typ == "set" {
		add = "update"
	}
	for _, sp := range splats {
		b.Call(&ir.Call{Kind: ir.CallMethod, Name: add, Recv: v, Args: []ir.Value{sp}}, "", pos(n))
	}
	return v
}

// dict lowers a dict display; `**d` entries are merged with update.
func (l *lowerer) dict(s *scope, n *syntax.Node) ir.Value {
	b := s.b
	var kv []ir.Value
	var splats []ir.Value
	for _, c := range named(n) {
		switch c.Type {
		case "pair":
			k := l.expr(s, c.Child("key"))
			kv = append(kv, k, l.expr(s, c.Child("value")))
		case "dictionary_splat":
			splats = append(splats, l.expr(s, c))
		}
	}
	v := b.MakeMap("dict", kv, pos(n))
	for _, sp := range splats {
		b.Call(&ir.Call{Kind: ir.CallMethod, Name: "update", Recv: v, Args: []ir.Value{sp}}, "", pos(n))
	}
	return v
}

// comprehension lowers a comprehension or generator expression inline: a
// fresh list (set, dict) filled by nested loops; the loop variables are
// fresh variables visible only inside it.
func (l *lowerer) comprehension(s *scope, n *syntax.Node) ir.Value {
	b := s.b
	var acc ir.Value
	switch n.Type {
	case "dictionary_comprehension":
		acc = b.MakeMap("dict", nil, pos(n))
	case "set_comprehension":
		acc = b.MakeList("set", nil, pos(n))
	default:
		acc = b.MakeList("list", nil, pos(n))
	}
	var clauses []*syntax.Node
	for _, c := range n.Children {
		if c.Type == "for_in_clause" || c.Type == "if_clause" {
			clauses = append(clauses, c)
		}
	}
	type saved struct {
		name string
		v    ir.VarID
		ok   bool
	}
	var restore []saved
	var emit func(i int)
	emit = func(i int) {
		if i == len(clauses) {
			body := n.Child("body")
			if body == nil {
				return
			}
			if body.Type == "pair" {
				k := l.expr(s, body.Child("key"))
				b.StoreIndex(acc, k, l.expr(s, body.Child("value")), pos(body))
				return
			}
			b.StoreIndex(acc, ir.None, l.expr(s, body), pos(body))
			return
		}
		c := clauses[i]
		if c.Type == "if_clause" {
			cond := ir.C(ir.Bool(true))
			if cs := named(c); len(cs) > 0 {
				cond = l.expr(s, cs[0])
			}
			then, next := b.NewBlock(), b.NewBlock()
			b.If(cond, then, next, pos(c))
			b.SetBlock(then)
			emit(i + 1)
			if b.Reachable() {
				b.Jump(next, pos(c))
			}
			b.SetBlock(next)
			return
		}
		it := l.expr(s, c.Child("right"))
		head := b.NewBlock()
		b.Jump(head, pos(c))
		b.SetBlock(head)
		more := b.Opaque([]ir.Value{it}, pos(c))
		body, exit := b.NewBlock(), b.NewBlock()
		b.If(more, body, exit, pos(c))
		b.SetBlock(body)
		left := c.Child("left")
		for _, name := range targetNames(l.src, left, nil) {
			old, ok := s.vars[name]
			restore = append(restore, saved{name, old, ok})
			s.vars[name] = b.Declare(name, "")
			if s.comp == nil {
				s.comp = map[string]int{}
			}
			s.comp[name]++
		}
		elem := b.LoadIndex(it, ir.None, elemType(b.Fn, it), pos(left))
		if left != nil {
			l.assignTarget(s, left, elem, pos(left), "")
		}
		emit(i + 1)
		if b.Reachable() {
			b.Jump(head, pos(c))
		}
		b.SetBlock(exit)
	}
	emit(0)
	for i := len(restore) - 1; i >= 0; i-- {
		r := restore[i]
		s.comp[r.name]--
		if r.ok {
			s.vars[r.name] = r.v
		} else {
			delete(s.vars, r.name)
		}
	}
	return acc
}

// yield adds the yielded value (each element for `yield from`) to the
// generator's list; the value of the expression is whatever is sent in.
func (l *lowerer) yield(s *scope, n *syntax.Node) ir.Value {
	b := s.b
	var v ir.Value
	if cs := named(n); len(cs) > 0 {
		v = l.expr(s, cs[0])
		if rest := strings.TrimSpace(strings.TrimPrefix(l.text(n), "yield")); strings.HasPrefix(rest, "from") &&
			len(rest) > 4 && (rest[4] == ' ' || rest[4] == '\t' || rest[4] == '(') {
			v = b.LoadIndex(v, ir.None, "", pos(n))
		}
	} else {
		v = ir.C(ir.Null())
	}
	if s.gen != ir.NoVar {
		b.StoreIndex(ir.V(s.gen), ir.None, v, pos(n))
	}
	return b.Opaque(nil, pos(n))
}
