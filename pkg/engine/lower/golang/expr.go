package golang

import (
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// expr lowers an expression into a value, flattening into temporaries.
func (x *fnCtx) expr(n *syntax.Node) ir.Value {
	b := x.b
	if n == nil {
		return ir.None
	}
	p := pos(n)
	switch n.Type {
	case "identifier":
		return x.ident(n)
	case "interpreted_string_literal", "raw_string_literal", "int_literal", "float_literal", "rune_literal",
		"true", "false", "nil":
		if c := x.fc.literal(n); c != nil {
			return ir.C(c)
		}
		return b.Opaque(nil, p)
	case "parenthesized_expression":
		if c := firstNamed(n); c != nil {
			return x.expr(c)
		}
	case "binary_expression":
		return x.binary(n)
	case "unary_expression":
		return x.unary(n)
	case "selector_expression":
		return x.selector(n)
	case "index_expression":
		obj := x.expr(n.Child("operand"))
		idx := x.expr(n.Child("index"))
		v := b.LoadIndex(obj, idx, x.elemType(obj), p)
		return v
	case "slice_expression":
		return x.slice(n)
	case "type_assertion_expression":
		t := n.Child("type")
		v := b.Cast(x.fc.typeName(t), x.expr(n.Child("operand")), p)
		x.kinds.set(v.Var, x.fc.typeKind(t))
		return v
	case "type_conversion_expression":
		t := n.Child("type")
		return x.cast(t, x.expr(n.Child("operand")), p)
	case "call_expression":
		return x.call(n)
	case "composite_literal":
		return x.composite(n.Child("type"), n.Child("body"))
	case "literal_value":
		return x.composite(nil, n)
	case "func_literal":
		return x.closure(n)
	case "iota", "imaginary_literal":
		return b.Opaque(nil, p)
	}
	// Types in expression position, error recovery: keep the operands.
	var args []ir.Value
	for _, c := range n.Children {
		if c.Named && !isTypeExpr(c) {
			if v := x.expr(c); !v.IsNone() {
				args = append(args, v)
			}
		}
	}
	return b.Opaque(args, p)
}

// literal converts a literal node to a constant, or nil.
func (fc *fileCtx) literal(n *syntax.Node) *ir.Const {
	t := fc.text(n)
	switch n.Type {
	case "interpreted_string_literal", "raw_string_literal":
		return ir.Str(unquote(t))
	case "int_literal":
		if i, err := strconv.ParseInt(strings.ReplaceAll(t, "_", ""), 0, 64); err == nil {
			return ir.Int(i)
		}
	case "float_literal":
		if f, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64); err == nil {
			return ir.Float(f)
		}
	case "rune_literal":
		if r := []rune(unquote(t)); len(r) == 1 {
			return ir.Int(int64(r[0]))
		}
	case "true":
		return ir.Bool(true)
	case "false":
		return ir.Bool(false)
	case "nil":
		return ir.Null()
	case "parenthesized_expression":
		if c := firstNamed(n); c != nil {
			return fc.literal(c)
		}
	}
	return nil
}

// ident reads a name: a local or captured variable, an inlined constant, a
// function of the file (a closure value), or a package-level global.
func (x *fnCtx) ident(n *syntax.Node) ir.Value {
	name := x.fc.text(n)
	if id, ok := x.lookup(name); ok {
		return ir.V(id)
	}
	fc := x.fc
	if c := fc.consts[name]; c != nil {
		cc := *c
		return ir.C(&cc)
	}
	if _, ok := fc.funcs[name]; ok {
		return x.funcValue(name, pos(n))
	}
	typ := fc.globals[name]
	return x.b.LoadGlobal(x.globalName(name), typ, pos(n))
}

// funcValue emits the closure value of a function ("name") or method
// ("Type.name") of the file, filled in once every function is lowered.
func (x *fnCtx) funcValue(key string, p ir.Pos) ir.Value {
	v := x.b.Closure(nil, p)
	blk := x.b.Current()
	x.fc.fixups = append(x.fc.fixups, fixup{fn: x.b.Fn, blk: blk, idx: len(x.b.Fn.Blocks[blk].Instrs) - 1, name: key})
	return v
}

// importOf returns the import path a selector operand names, when it is an
// identifier naming an import and no local variable.
func (x *fnCtx) importOf(op *syntax.Node) string {
	if op == nil || op.Type != "identifier" {
		return ""
	}
	name := x.fc.text(op)
	p := x.fc.resolveImport(name)
	if p == "" {
		return ""
	}
	if _, ok := x.lookup(name); ok {
		return ""
	}
	return p
}

func (x *fnCtx) selector(n *syntax.Node) ir.Value {
	op, fieldN := n.Child("operand"), n.Child("field")
	field := x.fc.text(fieldN)
	if p := x.importOf(op); p != "" {
		return x.b.LoadGlobal(p+"."+field, "", pos(n))
	}
	obj := x.expr(op)
	if tname, ti := x.localType(obj); tname != "" && (ti == nil || ti.ftypes[field] == "") {
		if fi := x.fc.methods[tname+"."+field]; fi != nil {
			// A method value (a handler passed to a router): the method.
			return x.funcValue(tname+"."+field, pos(n))
		}
	}
	typ, k := x.fieldType(obj, field)
	v := x.b.LoadField(obj, field, typ, pos(n))
	if k != kUnknown {
		x.kinds.set(v.Var, k)
	}
	return v
}

// localType returns the declaration of a variable's type when it is a type
// of this file.
func (x *fnCtx) localType(v ir.Value) (string, *typeInfo) {
	t := x.typeOf(v)
	if t == "" || !strings.HasPrefix(t, x.fc.pkg+".") {
		return "", nil
	}
	name := t[len(x.fc.pkg)+1:]
	return name, x.fc.types[name]
}

// fieldType is the declared type of a field of a struct of this file.
func (x *fnCtx) fieldType(obj ir.Value, field string) (string, kind) {
	if _, ti := x.localType(obj); ti != nil {
		return ti.ftypes[field], ti.fkinds[field]
	}
	return "", kUnknown
}

func (x *fnCtx) typeOf(v ir.Value) string {
	if v.IsVar() {
		return x.b.Fn.Vars[v.Var].Type
	}
	if v.Const != nil {
		switch v.Const.Kind {
		case ir.ConstStr:
			return "string"
		case ir.ConstInt:
			return "int"
		case ir.ConstFloat:
			return "float64"
		case ir.ConstBool:
			return "bool"
		}
	}
	return ""
}

func (x *fnCtx) kindOf(v ir.Value) kind {
	if v.IsVar() {
		if k := x.kinds.get(v.Var); k != kUnknown {
			return k
		}
		if k, ok := builtinTypes[x.b.Fn.Vars[v.Var].Type]; ok {
			return k
		}
		return kUnknown
	}
	if v.Const != nil {
		switch v.Const.Kind {
		case ir.ConstStr:
			return kString
		case ir.ConstInt, ir.ConstFloat:
			return kNumber
		case ir.ConstBool:
			return kBool
		}
	}
	return kUnknown
}

// elemType is the element type of a collection: its own (stripped) type.
func (x *fnCtx) elemType(coll ir.Value) string {
	switch x.kindOf(coll) {
	case kSlice:
		return x.typeOf(coll)
	case kString:
		return "byte"
	}
	return ""
}

func (x *fnCtx) binary(n *syntax.Node) ir.Value {
	b := x.b
	op := n.Child("operator").Type
	l, r := n.Child("left"), n.Child("right")
	if (op == "&&" || op == "||") && (hasCall(l) || hasCall(r)) {
		// Short-circuit with effects: branches into a result variable.
		res := b.Temp("bool")
		then, els, join := b.NewBlock(), b.NewBlock(), b.NewBlock()
		x.cond(n, then, els)
		b.SetBlock(then)
		b.Assign(res, ir.C(ir.Bool(true)), pos(n))
		b.Jump(join, pos(n))
		b.SetBlock(els)
		b.Assign(res, ir.C(ir.Bool(false)), pos(n))
		b.Jump(join, pos(n))
		b.SetBlock(join)
		return ir.V(res)
	}
	if op == "&^" {
		op = "&"
	}
	lv := x.expr(l)
	rv := x.expr(r)
	v := b.Binary(op, lv, rv, pos(n))
	if op == "+" && (x.kindOf(lv) == kString || x.kindOf(rv) == kString) {
		b.SetType(v.Var, "string")
		x.kinds.set(v.Var, kString)
	}
	return v
}

// hasCall reports whether an expression calls something or receives from a
// channel (func literal bodies excluded).
func hasCall(n *syntax.Node) bool {
	if n == nil {
		return false
	}
	switch n.Type {
	case "call_expression":
		return true
	case "func_literal":
		return false
	case "unary_expression":
		if op := n.Child("operator"); op != nil && op.Type == "<-" {
			return true
		}
	}
	for _, c := range n.Children {
		if hasCall(c) {
			return true
		}
	}
	return false
}

func (x *fnCtx) unary(n *syntax.Node) ir.Value {
	b := x.b
	operand := n.Child("operand")
	op := ""
	if o := n.Child("operator"); o != nil {
		op = o.Type
	}
	switch op {
	case "&", "*":
		return x.expr(operand)
	case "<-":
		ch := x.expr(operand)
		return b.LoadIndex(ch, ir.None, x.elemType(ch), pos(n))
	case "^":
		op = "~"
	}
	v := x.expr(operand)
	if op == "-" && v.IsConst() {
		switch v.Const.Kind {
		case ir.ConstInt:
			return ir.C(ir.Int(-v.Const.Int))
		case ir.ConstFloat:
			return ir.C(ir.Float(-v.Const.Float))
		}
	}
	return b.Unary(op, v, pos(n))
}

// slice lowers s[lo:hi]: the operand itself (bounds are evaluated for their
// effects), folded for a constant string with constant bounds.
func (x *fnCtx) slice(n *syntax.Node) ir.Value {
	v := x.expr(n.Child("operand"))
	lo, hi := ir.None, ir.None
	if s := n.Child("start"); s != nil {
		lo = x.expr(s)
	}
	if e := n.Child("end"); e != nil {
		hi = x.expr(e)
	}
	if c := n.Child("capacity"); c != nil {
		x.expr(c)
	}
	if v.IsConst() && v.Const.IsStr() {
		s := v.Const.Str
		i, j := int64(0), int64(len(s))
		okLo := lo.IsNone() || (lo.IsConst() && lo.Const.Kind == ir.ConstInt)
		okHi := hi.IsNone() || (hi.IsConst() && hi.Const.Kind == ir.ConstInt)
		if okLo && okHi {
			if !lo.IsNone() {
				i = lo.Const.Int
			}
			if !hi.IsNone() {
				j = hi.Const.Int
			}
			if 0 <= i && i <= j && j <= int64(len(s)) {
				return ir.C(ir.Str(s[i:j]))
			}
		}
		return x.b.Opaque([]ir.Value{v}, pos(n))
	}
	return v
}

// cast converts v to the type t.
func (x *fnCtx) cast(t *syntax.Node, v ir.Value, p ir.Pos) ir.Value {
	typ := x.fc.typeName(t)
	if typ == "" || x.fc.typeKind(t) == kSlice {
		// any and interface{}, and string <-> []byte / []rune conversions,
		// keep the value itself: a slice type's stripped name ("byte")
		// would read as a numeric conversion.
		return v
	}
	c := x.b.Cast(typ, v, p)
	x.kinds.set(c.Var, x.fc.typeKind(t))
	return c
}

// zero is the zero value of a declared type (see the package comment).
func (x *fnCtx) zero(t *syntax.Node, p ir.Pos) ir.Value {
	b := x.b
	if t == nil {
		return ir.C(ir.Null())
	}
	typ := x.fc.typeName(t)
	var v ir.Value
	switch k := x.fc.typeKind(t); k {
	case kString:
		return ir.C(ir.Str(""))
	case kNumber:
		return ir.C(ir.Int(0))
	case kBool:
		return ir.C(ir.Bool(false))
	case kSlice:
		v = b.MakeList(typ, nil, p)
	case kChan:
		v = b.MakeList("chan", nil, p)
	case kMap:
		v = b.MakeMap("map", nil, p)
	case kStruct:
		v = b.MakeMap(typ, nil, p)
	default:
		if t.Type == "qualified_type" || t.Type == "generic_type" {
			v = b.MakeMap(typ, nil, p) // a library value type: strings.Builder, bytes.Buffer
			k = kStruct
		} else {
			return ir.C(ir.Null())
		}
		x.kinds.set(v.Var, k)
		return v
	}
	x.kinds.set(v.Var, x.fc.typeKind(t))
	return v
}

// composite lowers a composite literal; t is nil for an element literal
// whose type is elided (then elemType, the enclosing element type, is used
// by the caller).
func (x *fnCtx) composite(t, body *syntax.Node) ir.Value {
	b := x.b
	p := pos(body)
	if t != nil && t.Type == "generic_type" {
		t = t.Child("type")
	}
	k := x.fc.typeKind(t)
	typ := x.fc.typeName(t)
	var elems []*syntax.Node
	if body != nil {
		for _, c := range body.Children {
			if c.Type == "literal_element" || c.Type == "keyed_element" {
				elems = append(elems, c)
			}
		}
	}
	// elemValue lowers one element, passing the element type to elided
	// nested literals.
	elemValue := func(e, et *syntax.Node) ir.Value {
		if e != nil && e.Type == "literal_element" {
			e = firstNamed(e)
		}
		if e == nil {
			return ir.C(ir.Null())
		}
		if e.Type == "literal_value" {
			return x.composite(et, e)
		}
		return x.expr(e)
	}
	switch k {
	case kSlice:
		var et *syntax.Node
		if t != nil {
			et = t.Child("element")
		}
		vals := make([]ir.Value, 0, len(elems))
		for _, e := range elems {
			if e.Type == "keyed_element" {
				kv := keyedParts(e)
				vals = append(vals, elemValue(kv[1], et))
				continue
			}
			vals = append(vals, elemValue(e, et))
		}
		v := b.MakeList(typ, vals, p)
		x.kinds.set(v.Var, kSlice)
		return v
	case kMap:
		kt, vt := t.Child("key"), t.Child("value")
		kv := make([]ir.Value, 0, 2*len(elems))
		for _, e := range elems {
			if e.Type != "keyed_element" {
				continue
			}
			parts := keyedParts(e)
			kv = append(kv, elemValue(parts[0], kt), elemValue(parts[1], vt))
		}
		v := b.MakeMap("map", kv, p)
		x.kinds.set(v.Var, kMap)
		return v
	}
	// Structs (and literals of types this file does not declare).
	var fields []string
	if t != nil && (t.Type == "type_identifier") {
		if ti := x.fc.types[x.fc.text(t)]; ti != nil {
			fields = ti.fields
		}
	}
	kv := make([]ir.Value, 0, 2*len(elems))
	for i, e := range elems {
		if e.Type == "keyed_element" {
			parts := keyedParts(e)
			key := parts[0]
			if key.Type == "literal_element" {
				key = firstNamed(key)
			}
			var kval ir.Value
			switch {
			case key == nil:
				kval = ir.C(ir.Null())
			case key.Type == "identifier" || key.Type == "field_identifier":
				kval = ir.C(ir.Str(x.fc.text(key)))
			default:
				kval = elemValue(key, nil)
			}
			kv = append(kv, kval, elemValue(parts[1], nil))
			continue
		}
		key := ir.C(ir.Int(int64(i)))
		if i < len(fields) {
			key = ir.C(ir.Str(fields[i]))
		}
		kv = append(kv, key, elemValue(e, nil))
	}
	v := b.MakeMap(typ, kv, p)
	x.kinds.set(v.Var, kStruct)
	return v
}

// keyedParts returns the key and value nodes of a keyed element.
func keyedParts(e *syntax.Node) [2]*syntax.Node {
	var out [2]*syntax.Node
	i := 0
	for _, c := range e.Children {
		if c.Named && i < 2 {
			out[i] = c
			i++
		}
	}
	if out[1] == nil {
		out[1] = out[0]
	}
	return out
}
