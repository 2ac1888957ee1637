package php

import (
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// expr lowers an expression and returns its value.
func (f *fnLowerer) expr(n *syntax.Node) ir.Value {
	pos := posOf(n)
	switch n.Type {
	case "parenthesized_expression", "clone_expression", "error_suppression_expression", "variadic_unpacking", "by_ref":
		if c := firstNamed(n); c != nil {
			return f.expr(c)
		}
		return ir.C(ir.Null())
	case "variable_name":
		return f.readVar(varName(n, f.l.src), pos)
	case "dynamic_variable_name":
		// "${x}" names $x; $$x and ${expr} name a variable computed at run
		// time.
		if c := firstNamed(n); c != nil && c.Type == "name" && len(namedOf(n)) == 1 {
			return f.readVar(c.Text(f.l.src), pos)
		}
		return f.b.Opaque(f.namedValues(n), pos)
	case "integer":
		return ir.C(parseInt(n.Text(f.l.src)))
	case "float":
		v, err := strconv.ParseFloat(strings.ReplaceAll(n.Text(f.l.src), "_", ""), 64)
		if err != nil {
			v = math.NaN()
		}
		return ir.C(ir.Float(v))
	case "boolean":
		return ir.C(ir.Bool(strings.EqualFold(n.Text(f.l.src), "true")))
	case "null":
		return ir.C(ir.Null())
	case "string", "encapsed_string", "heredoc", "nowdoc":
		return f.stringExpr(n)
	case "name", "qualified_name":
		return f.constant(nameText(n, f.l.src), pos)
	case "binary_expression":
		return f.binary(n)
	case "unary_op_expression":
		op := "!"
		if o := n.Child("operator"); o != nil {
			op = o.Type
		}
		arg := n.Child("argument")
		if arg == nil {
			arg = firstNamed(n)
		}
		if arg == nil {
			return ir.C(ir.Null())
		}
		x := f.expr(arg)
		if op == "+" || op == "-" {
			if x.IsConst() && x.Const.Kind == ir.ConstInt {
				if op == "-" {
					return ir.C(ir.Int(-x.Const.Int))
				}
				return x
			}
		}
		return f.b.Unary(op, x, pos)
	case "assignment_expression", "reference_assignment_expression":
		left, right := n.Child("left"), n.Child("right")
		if left == nil || right == nil {
			return f.b.Opaque(f.namedValues(n), pos)
		}
		v := f.expr(right)
		if n.Type == "assignment_expression" && left.Type == "variable_name" && v.IsVar() {
			// arrays are values: $b = $a copies $a's array, =& shares it
			f.writeVarAs(varName(left, f.l.src), v, pos, true)
			return v
		}
		f.assign(left, v, pos)
		return v
	case "augmented_assignment_expression":
		return f.augmented(n)
	case "update_expression":
		return f.update(n)
	case "conditional_expression":
		return f.ternary(n)
	case "cast_expression":
		t := ""
		if c := n.Child("type"); c != nil {
			t = strings.ToLower(strings.TrimSpace(c.Text(f.l.src)))
		}
		if canon, ok := castTypes[t]; ok {
			t = canon
		}
		val := n.Child("value")
		if val == nil {
			return ir.C(ir.Null())
		}
		return f.b.Cast(t, f.expr(val), pos)
	case "member_access_expression", "nullsafe_member_access_expression":
		obj := f.exprOrNull(n.Child("object"))
		name := n.Child("name")
		if name == nil || name.Type != "name" {
			return f.b.Opaque(append([]ir.Value{obj}, f.namedValues(name)...), pos)
		}
		return f.b.LoadField(obj, name.Text(f.l.src), "", pos)
	case "scoped_property_access_expression":
		if g := f.staticProperty(n); g != "" {
			return f.b.LoadGlobal(g, "", pos)
		}
		return f.b.Opaque(f.namedValues(n), pos)
	case "class_constant_access_expression":
		return f.classConstant(n)
	case "subscript_expression":
		return f.subscript(n)
	case "function_call_expression":
		return f.funcCall(n)
	case "member_call_expression", "nullsafe_member_call_expression":
		return f.methodCall(n)
	case "scoped_call_expression":
		return f.staticCall(n)
	case "object_creation_expression":
		return f.newExpr(n)
	case "array_creation_expression":
		return f.array(n)
	case "anonymous_function_creation_expression", "arrow_function":
		return f.lambda(n)
	case "print_intrinsic":
		return f.call(&ir.Call{Kind: ir.CallFunc, Name: "print", Args: f.namedValues(n)}, "", pos)
	case "shell_command_expression":
		return f.call(&ir.Call{Kind: ir.CallFunc, Name: "shell_exec", Args: []ir.Value{f.stringExpr(n)}}, "", pos)
	case "include_expression", "include_once_expression", "require_expression", "require_once_expression":
		name := strings.TrimSuffix(n.Type, "_expression")
		return f.call(&ir.Call{Kind: ir.CallFunc, Name: name, Args: f.namedValues(n)}, "", pos)
	case "throw_expression":
		v := ir.Value(ir.C(ir.Null()))
		if c := firstNamed(n); c != nil {
			v = f.expr(c)
		}
		f.b.Throw(v, pos)
		return ir.C(ir.Null())
	case "match_expression":
		return f.match(n)
	case "yield_expression":
		f.namedValues(n)
		return f.b.Opaque(nil, pos)
	case "sequence_expression":
		vs := f.namedValues(n)
		if len(vs) == 0 {
			return ir.C(ir.Null())
		}
		return vs[len(vs)-1]
	case "array_element_initializer":
		vs := f.namedValues(n)
		if len(vs) == 0 {
			return ir.C(ir.Null())
		}
		return vs[len(vs)-1]
	case "ERROR":
		for _, c := range n.Children {
			f.stmt(c)
		}
		return f.b.Opaque(nil, pos)
	case "comment":
		return ir.C(ir.Null())
	}
	return f.b.Opaque(f.namedValues(n), pos)
}

func (f *fnLowerer) exprOrNull(n *syntax.Node) ir.Value {
	if n == nil {
		return ir.C(ir.Null())
	}
	return f.expr(n)
}

// namedValues lowers every named child that is an expression.
func (f *fnLowerer) namedValues(n *syntax.Node) []ir.Value {
	if n == nil {
		return nil
	}
	var out []ir.Value
	for _, c := range n.Children {
		if c.Named && c.Type != "comment" {
			out = append(out, f.expr(c))
		}
	}
	return out
}

func firstNamed(n *syntax.Node) *syntax.Node {
	for _, c := range n.Children {
		if c.Named && c.Type != "comment" {
			return c
		}
	}
	return nil
}

// parseInt reads a PHP integer literal (decimal, 0x, 0o, 0b, leading-zero
// octal, underscores); literals beyond int64 become floats, as in PHP.
func parseInt(t string) *ir.Const {
	if v, err := strconv.ParseInt(t, 0, 64); err == nil {
		return ir.Int(v)
	}
	clean := strings.ReplaceAll(t, "_", "")
	if v, err := strconv.ParseInt(clean, 0, 64); err == nil {
		return ir.Int(v)
	}
	if v, err := strconv.ParseFloat(clean, 64); err == nil {
		return ir.Float(v)
	}
	return ir.Int(0)
}

// constant lowers a bare constant name: true, false, null, the magic
// constants, or a global constant.
func (f *fnLowerer) constant(name string, pos ir.Pos) ir.Value {
	switch strings.ToLower(name) {
	case "true", "\\true":
		return ir.C(ir.Bool(true))
	case "false", "\\false":
		return ir.C(ir.Bool(false))
	case "null", "\\null":
		return ir.C(ir.Null())
	}
	switch strings.ToUpper(name) {
	case "__DIR__":
		return ir.C(ir.Str(path.Dir(f.l.path)))
	case "__FILE__":
		return ir.C(ir.Str(f.l.path))
	case "__LINE__":
		return ir.C(ir.Int(int64(pos.Line)))
	case "__NAMESPACE__":
		return ir.C(ir.Str(f.l.scope.ns))
	case "__CLASS__":
		if f.cls != nil {
			return ir.C(ir.Str(f.cls.QName))
		}
		return ir.C(ir.Str(""))
	case "__FUNCTION__":
		return ir.C(ir.Str(f.b.Fn.Name))
	case "__METHOD__":
		if f.cls != nil {
			return ir.C(ir.Str(f.cls.QName + "::" + f.b.Fn.Name))
		}
		return ir.C(ir.Str(f.b.Fn.Name))
	}
	return f.b.LoadGlobal(f.l.scope.constant(name), "", pos)
}

// this returns the receiver: the method's $this, or inside a closure the
// captured $this of the enclosing method.
func (f *fnLowerer) this() ir.VarID {
	if f.thisVar != ir.NoVar {
		return f.thisVar
	}
	typ := ""
	if f.cls != nil {
		typ = f.cls.QName
	}
	if f.closure || f.arrow {
		f.thisVar = f.b.Captured("this", typ)
		return f.thisVar
	}
	return f.b.Var("this", typ)
}

// readVar reads a variable.
func (f *fnLowerer) readVar(name string, pos ir.Pos) ir.Value {
	if superglobals[name] || name == "GLOBALS" {
		return f.b.LoadGlobal("$"+name, "", pos)
	}
	if name == "this" {
		return ir.V(f.this())
	}
	if f.assigned[name] {
		return ir.V(f.b.Var(name, ""))
	}
	f.assigned[name] = true
	switch {
	case f.arrow || (f.closure && f.uses[name]):
		return ir.V(f.b.Captured(name, ""))
	case f.init:
		// Loaded once at the entry, so that a read inside a loop or a
		// branch does not reload it.
		id := f.b.Var(name, "")
		f.preload = append(f.preload, ir.Instr{Op: ir.OpLoadGlobal, Dst: id, Name: "$" + name, Pos: pos})
		return ir.V(id)
	}
	return ir.V(f.b.Var(name, ""))
}

// writeVar assigns a variable; script globals are stored back.
func (f *fnLowerer) writeVar(name string, v ir.Value, pos ir.Pos) {
	f.writeVarAs(name, v, pos, false)
}

// writeVarAs assigns a variable, copying the array v holds when copy is set.
func (f *fnLowerer) writeVarAs(name string, v ir.Value, pos ir.Pos, copy bool) {
	if superglobals[name] || name == "GLOBALS" {
		f.b.StoreGlobal("$"+name, v, pos)
		return
	}
	if name == "this" {
		return
	}
	// A variable takes the class type of the first object assigned to it;
	// scalar and array types are left to inference.
	typ := ""
	if v.IsVar() {
		if t := f.b.Fn.Vars[v.Var].Type; t != "" && !scalarTypes[t] {
			typ = t
		}
	}
	var id ir.VarID
	if !f.assigned[name] && f.closure && f.uses[name] {
		id = f.b.Captured(name, typ)
	} else {
		id = f.b.Var(name, typ)
	}
	f.assigned[name] = true
	if copy {
		f.b.Copy(id, v, pos)
	} else {
		f.b.Assign(id, v, pos)
	}
	if f.init || f.globals[name] {
		f.b.StoreGlobal("$"+name, ir.V(id), pos)
	}
}

// binary lowers a binary operator; logical operators and ?? branch when
// their right operand has effects.
func (f *fnLowerer) binary(n *syntax.Node) ir.Value {
	pos := posOf(n)
	op := ""
	if o := n.Child("operator"); o != nil {
		op = strings.ToLower(o.Type)
	}
	left, right := n.Child("left"), n.Child("right")
	if left == nil || right == nil {
		return f.b.Opaque(f.namedValues(n), pos)
	}
	switch op {
	case "and":
		op = "&&"
	case "or":
		op = "||"
	case "xor":
		op = "^"
	case "<>":
		op = "!="
	}
	switch op {
	case "&&", "||", "??":
		if hasEffects(right) {
			return f.shortCircuit(op, left, right, pos)
		}
		if op != "??" {
			// PHP's logical operators yield booleans, not an operand.
			x := f.expr(left)
			y := f.expr(right)
			return f.b.Cast("bool", f.b.Binary(op, x, y, pos), pos)
		}
	case "^":
		if strings.EqualFold(n.Child("operator").Type, "xor") {
			x := f.expr(left)
			y := f.expr(right)
			return f.b.Cast("bool", f.b.Binary("!=", x, y, pos), pos)
		}
	case "instanceof":
		x := f.expr(left)
		if right.Type == "name" || right.Type == "qualified_name" {
			return f.b.Binary(op, x, ir.C(ir.Str(f.className(nameText(right, f.l.src)))), pos)
		}
		return f.b.Binary(op, x, f.expr(right), pos)
	}
	x := f.expr(left)
	y := f.expr(right)
	return f.b.Binary(op, x, y, pos)
}

// shortCircuit lowers && and || (a boolean of the last operand evaluated)
// and ?? (the right operand only when the left is null) as branches.
func (f *fnLowerer) shortCircuit(op string, left, right *syntax.Node, pos ir.Pos) ir.Value {
	res := f.b.Temp("")
	f.b.Assign(res, f.expr(left), pos)
	test := ir.V(res)
	if op == "??" {
		test = f.b.Binary("===", ir.V(res), ir.C(ir.Null()), pos)
	}
	then, els := f.branch(test, pos)
	end := f.b.NewBlock()
	evalRight, skip := then, els
	if op == "||" {
		evalRight, skip = els, then
	}
	f.b.SetBlock(skip)
	f.b.Jump(end, pos)
	f.b.SetBlock(evalRight)
	v := f.expr(right)
	if f.b.Reachable() {
		f.b.Assign(res, v, pos)
		f.b.Jump(end, pos)
	}
	f.b.SetBlock(end)
	if op != "??" {
		return f.b.Cast("bool", ir.V(res), pos)
	}
	return ir.V(res)
}

// effectful are the node types whose evaluation can do more than compute a
// value.
var effectful = map[string]bool{
	"function_call_expression": true, "member_call_expression": true, "nullsafe_member_call_expression": true,
	"scoped_call_expression": true, "object_creation_expression": true, "assignment_expression": true,
	"reference_assignment_expression": true, "augmented_assignment_expression": true, "update_expression": true,
	"print_intrinsic": true, "shell_command_expression": true, "include_expression": true,
	"include_once_expression": true, "require_expression": true, "require_once_expression": true,
	"throw_expression": true, "yield_expression": true, "match_expression": true, "conditional_expression": true,
	"anonymous_function_creation_expression": true, "arrow_function": true,
}

func hasEffects(n *syntax.Node) bool {
	if effectful[n.Type] {
		return true
	}
	for _, c := range n.Children {
		if hasEffects(c) {
			return true
		}
	}
	return false
}

// ternary lowers c ? a : b and the short c ?: b as branches.
func (f *fnLowerer) ternary(n *syntax.Node) ir.Value {
	pos := posOf(n)
	c := f.exprOrNull(n.Child("condition"))
	res := f.b.Temp("")
	end := f.b.NewBlock()
	then, els := f.branch(c, pos)
	f.b.SetBlock(then)
	v := c
	if body := n.Child("body"); body != nil {
		v = f.expr(body)
	}
	if f.b.Reachable() {
		f.b.Assign(res, v, pos)
		f.b.Jump(end, pos)
	}
	f.b.SetBlock(els)
	w := f.exprOrNull(n.Child("alternative"))
	if f.b.Reachable() {
		f.b.Assign(res, w, pos)
		f.b.Jump(end, pos)
	}
	f.b.SetBlock(end)
	return ir.V(res)
}

// augmented lowers x op= v as x = x op v; x ??= v assigns only when x is
// null.
func (f *fnLowerer) augmented(n *syntax.Node) ir.Value {
	pos := posOf(n)
	left, right := n.Child("left"), n.Child("right")
	if left == nil || right == nil {
		return f.b.Opaque(f.namedValues(n), pos)
	}
	op := "="
	if o := n.Child("operator"); o != nil {
		op = o.Type
	}
	op = strings.TrimSuffix(op, "=")
	cur := f.expr(left)
	if op == "??" {
		isNull := f.b.Binary("===", cur, ir.C(ir.Null()), pos)
		then, els := f.branch(isNull, pos)
		end := f.b.NewBlock()
		f.b.SetBlock(els)
		f.b.Jump(end, pos)
		f.b.SetBlock(then)
		v := f.expr(right)
		if f.b.Reachable() {
			f.assign(left, v, pos)
			f.b.Jump(end, pos)
		}
		f.b.SetBlock(end)
		return f.expr(left)
	}
	v := f.b.Binary(op, cur, f.expr(right), pos)
	f.assign(left, v, pos)
	return v
}

// update lowers ++ and --; the postfix forms yield the old value.
func (f *fnLowerer) update(n *syntax.Node) ir.Value {
	pos := posOf(n)
	arg := n.Child("argument")
	op := n.Child("operator")
	if arg == nil || op == nil {
		return f.b.Opaque(f.namedValues(n), pos)
	}
	bin := "+"
	if op.Type == "--" {
		bin = "-"
	}
	old := f.expr(arg)
	prefix := op.Start < arg.Start
	if !prefix && old.IsVar() {
		t := f.b.Temp("")
		f.b.Assign(t, old, pos)
		old = ir.V(t)
	}
	nv := f.b.Binary(bin, old, ir.C(ir.Int(1)), pos)
	f.assign(arg, nv, pos)
	if prefix {
		return nv
	}
	return old
}

// staticProperty returns the global name of a static property access
// (A::$p), or "" when its class or name is dynamic.
func (f *fnLowerer) staticProperty(n *syntax.Node) string {
	scope, name := n.Child("scope"), n.Child("name")
	if scope == nil || name == nil || name.Type != "variable_name" {
		return ""
	}
	switch scope.Type {
	case "name", "qualified_name", "relative_scope":
		return f.className(nameText(scope, f.l.src)) + "::$" + varName(name, f.l.src)
	}
	return ""
}

// classConstant lowers A::K (a global "A::K") and A::class (the class name).
func (f *fnLowerer) classConstant(n *syntax.Node) ir.Value {
	pos := posOf(n)
	named := n.NamedChildren()
	if len(named) < 2 {
		return f.b.Opaque(f.namedValues(n), pos)
	}
	scope, name := named[0], named[len(named)-1]
	member := name.Text(f.l.src)
	switch scope.Type {
	case "name", "qualified_name", "relative_scope":
		cls := f.className(nameText(scope, f.l.src))
		if strings.EqualFold(member, "class") {
			return ir.C(ir.Str(cls))
		}
		return f.b.LoadGlobal(cls+"::"+member, "", pos)
	}
	return f.b.Opaque([]ir.Value{f.expr(scope)}, pos)
}

// subscript lowers $a[k]; $GLOBALS['x'] reads the global "$x".
func (f *fnLowerer) subscript(n *syntax.Node) ir.Value {
	pos := posOf(n)
	base, idx := subscriptParts(n)
	if base == nil {
		return f.b.Opaque(nil, pos)
	}
	if g := f.globalsKey(base, idx); g != "" {
		return f.b.LoadGlobal(g, "", pos)
	}
	obj := f.expr(base)
	k := ir.None
	switch {
	case idx == nil:
	case idx.Type == "name" && n.Parent != nil && interpolating[n.Parent.Type]:
		// "$a[key]" inside a string: an unquoted key is a string.
		k = ir.C(ir.Str(idx.Text(f.l.src)))
	default:
		k = f.expr(idx)
	}
	return f.b.LoadIndex(obj, k, "", pos)
}

// interpolating are the node types whose children are interpolated into a
// string.
var interpolating = map[string]bool{"encapsed_string": true, "heredoc_body": true, "shell_command_expression": true}

func subscriptParts(n *syntax.Node) (base, idx *syntax.Node) {
	for _, c := range n.Children {
		if !c.Named || c.Type == "comment" {
			continue
		}
		if base == nil {
			base = c
		} else if idx == nil {
			idx = c
		}
	}
	return base, idx
}

// globalsKey returns "$x" for $GLOBALS['x'], else "".
func (f *fnLowerer) globalsKey(base, idx *syntax.Node) string {
	if base.Type != "variable_name" || varName(base, f.l.src) != "GLOBALS" || idx == nil {
		return ""
	}
	if s, ok := f.l.literalString(idx); ok && (idx.Type == "string" || idx.Type == "encapsed_string") {
		return "$" + s
	}
	return ""
}

// constOf returns the value of a literal expression without lowering code,
// or nil.
func (f *fnLowerer) constOf(n *syntax.Node) *ir.Const {
	if n == nil {
		return nil
	}
	switch n.Type {
	case "integer":
		return parseInt(n.Text(f.l.src))
	case "float":
		if v, err := strconv.ParseFloat(strings.ReplaceAll(n.Text(f.l.src), "_", ""), 64); err == nil {
			return ir.Float(v)
		}
	case "boolean":
		return ir.Bool(strings.EqualFold(n.Text(f.l.src), "true"))
	case "null":
		return ir.Null()
	case "string", "encapsed_string", "heredoc", "nowdoc":
		if s, ok := f.l.literalString(n); ok {
			return ir.Str(s)
		}
	case "parenthesized_expression":
		return f.constOf(firstNamed(n))
	case "class_constant_access_expression":
		named := n.NamedChildren()
		if len(named) == 2 && strings.EqualFold(named[1].Text(f.l.src), "class") {
			return ir.Str(f.className(nameText(named[0], f.l.src)))
		}
	}
	return nil
}
