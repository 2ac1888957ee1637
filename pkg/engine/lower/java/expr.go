package java

import (
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

const stringType = "java.lang.String"

// exprTyped lowers an expression whose expected type is known (array
// initializers need it).
func (fc *fnCtx) exprTyped(n *syntax.Node, typ string) ir.Value {
	if n != nil && n.Type == "array_initializer" {
		return fc.arrayInit(n, typ)
	}
	return fc.expr(n)
}

// expr lowers an expression and returns its value.
func (fc *fnCtx) expr(n *syntax.Node) ir.Value {
	if n == nil {
		return ir.None
	}
	b := fc.b
	l := fc.l
	p := pos(n)
	switch n.Type {
	case "parenthesized_expression":
		return fc.expr(firstNamed(n))
	case "string_literal":
		return ir.C(ir.Str(l.stringLit(n)))
	case "character_literal":
		return ir.C(ir.Str(charLit(l.text(n))))
	case "decimal_integer_literal", "hex_integer_literal", "octal_integer_literal", "binary_integer_literal":
		return ir.C(ir.Int(intLit(l.text(n))))
	case "decimal_floating_point_literal", "hex_floating_point_literal":
		return ir.C(ir.Float(floatLit(l.text(n))))
	case "true":
		return ir.C(ir.Bool(true))
	case "false":
		return ir.C(ir.Bool(false))
	case "null_literal":
		return ir.C(ir.Null())
	case "identifier":
		return fc.ident(n)
	case "this":
		return fc.thisVal()
	case "field_access":
		return fc.fieldAccess(n)
	case "array_access":
		arr := fc.expr(n.Child("array"))
		idx := fc.expr(n.Child("index"))
		return b.LoadIndex(arr, idx, elemType(fc.typeOfValue(arr)), p)
	case "method_invocation":
		return fc.call(n)
	case "object_creation_expression":
		return fc.newExpr(n)
	case "array_creation_expression":
		return fc.arrayCreation(n)
	case "array_initializer":
		return fc.arrayInit(n, "")
	case "binary_expression":
		return fc.binary(n)
	case "unary_expression":
		x := fc.expr(n.Child("operand"))
		return b.Unary(l.text(n.Child("operator")), x, p)
	case "update_expression":
		return fc.update(n)
	case "assignment_expression":
		return fc.assign(n)
	case "ternary_expression":
		return fc.ternary(n)
	case "instanceof_expression":
		return fc.instanceOf(n)
	case "cast_expression":
		typ := l.typeOf(n.Child("type"), fc.cls)
		x := fc.expr(n.Child("value"))
		return b.Cast(typ, x, p)
	case "lambda_expression":
		return fc.lambdaExpr(n)
	case "method_reference":
		return fc.methodRef(n)
	case "class_literal":
		return ir.C(ir.Str(l.typeOf(firstNamed(n), fc.cls)))
	case "switch_expression":
		return fc.switchExpr(n, "", true)
	}
	// Anything else: a value computed from its operands.
	var args []ir.Value
	for _, c := range n.Children {
		if c.Named {
			if v := fc.expr(c); !v.IsNone() {
				args = append(args, v)
			}
		}
	}
	return b.Opaque(args, p)
}

// typeOfValue returns the static type of a value ("" unknown).
func (fc *fnCtx) typeOfValue(v ir.Value) string {
	switch {
	case v.IsVar():
		return fc.b.Fn.Vars[v.Var].Type
	case v.IsConst() && v.Const.Kind == ir.ConstStr:
		return stringType
	}
	return ""
}

func elemType(t string) string {
	if strings.HasSuffix(t, "[]") {
		return t[:len(t)-2]
	}
	return ""
}

// ident lowers a simple name: a local (or captured) variable, a field, a
// statically imported constant.
func (fc *fnCtx) ident(n *syntax.Node) ir.Value {
	name := fc.l.text(n)
	if v, ok := fc.lookupLocal(name); ok {
		return ir.V(v)
	}
	if v, ok := fc.fieldRef(name, pos(n)); ok {
		return v
	}
	if cls, ok := fc.l.staticOwner(name, false); ok {
		return fc.b.LoadGlobal("java:"+cls+"."+name, "", pos(n))
	}
	// An inherited field the file does not declare.
	if this := fc.thisVal(); !this.IsNone() {
		return fc.b.LoadField(this, name, "", pos(n))
	}
	return fc.b.LoadGlobal("java:"+fc.cls.cls.QName+"."+name, "", pos(n))
}

// findField finds a field by simple name in the current class or its
// enclosing classes.
func (fc *fnCtx) findField(name string) (fieldInfo, bool) {
	for c := fc.cls; c != nil; c = c.outer {
		if fi, ok := c.fields[name]; ok {
			return fi, true
		}
	}
	return fieldInfo{}, false
}

// fieldRef reads a field of the current class or of an enclosing class.
func (fc *fnCtx) fieldRef(name string, p ir.Pos) (ir.Value, bool) {
	hops, reach := 0, true
	for c := fc.cls; c != nil; c = c.outer {
		if fi, ok := c.fields[name]; ok {
			if fi.static {
				return fc.b.LoadGlobal("java:"+c.cls.QName+"."+name, fi.typ, p), true
			}
			obj := fc.thisVal()
			if obj.IsNone() || !reach {
				return fc.b.LoadGlobal("java:"+c.cls.QName+"."+name, fi.typ, p), true
			}
			obj = fc.outerThis(obj, hops, p)
			return fc.b.LoadField(obj, name, fi.typ, p), true
		}
		if c.inner {
			hops++
		} else {
			reach = false
		}
	}
	return ir.None, false
}

// outerThis follows the enclosing-instance field hops times.
func (fc *fnCtx) outerThis(obj ir.Value, hops int, p ir.Pos) ir.Value {
	c := fc.cls
	for i := 0; i < hops && c != nil; i++ {
		c = c.outer
		typ := ""
		if c != nil {
			typ = c.cls.QName
		}
		obj = fc.b.LoadField(obj, "this$0", typ, p)
	}
	return obj
}

// isValueName reports whether a simple name is a variable or field in scope
// (so that it is not a type qualifier).
func (fc *fnCtx) isValueName(name string) bool {
	for f := fc; f != nil; f = f.parent {
		if _, ok := f.scope[name]; ok {
			return true
		}
		for c := f.cls; c != nil; c = c.outer {
			if _, ok := c.fields[name]; ok {
				return true
			}
		}
	}
	_, ok := fc.l.statics[name]
	return ok
}

// typeQualifier reports whether an expression node names a type (a static
// member access follows) and returns its FQN.
func (fc *fnCtx) typeQualifier(n *syntax.Node) (string, bool) {
	l := fc.l
	var segs []string
	if n == nil || !l.segments(n, &segs) || len(segs) == 0 {
		return "", false
	}
	if fc.isValueName(segs[0]) {
		return "", false
	}
	k := 0
	if isLowerStart(segs[0]) {
		// A package prefix: the first capitalised segment is the class.
		k = -1
		for i, s := range segs {
			if !isLowerStart(s) {
				k = i
				break
			}
		}
		if k < 0 {
			return "", false
		}
	} else if !l.isTypeName(segs[0], fc.cls) {
		return "", false
	}
	q := strings.Join(segs[:k+1], ".")
	if k == 0 {
		q = l.resolveType(segs[0], fc.cls)
	}
	for _, s := range segs[k+1:] {
		if !l.isNestedClass(q, s) {
			return "", false
		}
		q += "." + s
	}
	return q, true
}

// isNestedClass reports whether name, written after class outer, is a
// member class rather than a static field: what the file declares decides,
// else the naming convention (a capital followed by a lower-case letter).
func (l *lowerer) isNestedClass(outer, name string) bool {
	if l.declared[outer+"."+name] {
		return true
	}
	if cc := l.classes[outer]; cc != nil {
		if _, ok := cc.fields[name]; ok {
			return false
		}
		if _, ok := cc.nested[name]; ok {
			return true
		}
	}
	return len(name) > 1 && name[0] >= 'A' && name[0] <= 'Z' && name[1] >= 'a' && name[1] <= 'z'
}

// segments collects the identifiers of a dotted name; false when the node
// is not a plain dotted name.
func (l *lowerer) segments(n *syntax.Node, out *[]string) bool {
	switch n.Type {
	case "identifier", "type_identifier":
		*out = append(*out, l.text(n))
		return true
	case "field_access":
		obj, f := n.Child("object"), n.Child("field")
		if obj == nil || f == nil || f.Type != "identifier" {
			return false
		}
		return l.segments(obj, out) && l.segments(f, out)
	case "scoped_identifier", "scoped_type_identifier":
		for _, c := range n.Children {
			if c.Named && !l.segments(c, out) {
				return false
			}
		}
		return true
	case "generic_type":
		return l.segments(firstNamed(n), out)
	}
	return false
}

// fieldAccess lowers obj.f, this.f, Outer.this, super.f and static fields.
func (fc *fnCtx) fieldAccess(n *syntax.Node) ir.Value {
	l := fc.l
	b := fc.b
	p := pos(n)
	obj, field := n.Child("object"), n.Child("field")
	if field == nil {
		return b.Opaque(nil, p)
	}
	if field.Type == "this" { // Outer.this
		return fc.qualifiedThis(l.text(obj), p)
	}
	name := l.text(field)
	if obj != nil && (obj.Type == "this" || obj.Type == "super") {
		typ := ""
		if fi, ok := fc.cls.fields[name]; ok {
			if fi.static {
				return b.LoadGlobal("java:"+fc.cls.cls.QName+"."+name, fi.typ, p)
			}
			typ = fi.typ
		}
		return b.LoadField(fc.thisVal(), name, typ, p)
	}
	if q, ok := fc.typeQualifier(obj); ok {
		typ := ""
		if cc := l.classes[q]; cc != nil {
			typ = cc.fields[name].typ
		}
		return b.LoadGlobal("java:"+q+"."+name, typ, p)
	}
	o := fc.expr(obj)
	typ := ""
	if cc := l.classes[fc.typeOfValue(o)]; cc != nil {
		typ = cc.fields[name].typ
	}
	if name == "length" && strings.HasSuffix(fc.typeOfValue(o), "[]") {
		typ = "int"
	}
	return b.LoadField(o, name, typ, p)
}

// qualifiedThis lowers Outer.this.
func (fc *fnCtx) qualifiedThis(outer string, p ir.Pos) ir.Value {
	q := fc.l.resolveType(outer, fc.cls)
	hops := 0
	for c := fc.cls; c != nil && c.cls.QName != q && c.cls.Name != outer; c = c.outer {
		hops++
	}
	return fc.outerThis(fc.thisVal(), hops, p)
}

// args lowers an argument list.
func (fc *fnCtx) args(n *syntax.Node) []ir.Value {
	if n == nil {
		return nil
	}
	out := make([]ir.Value, 0, len(n.Children))
	for _, c := range n.Children {
		if c.Named {
			out = append(out, fc.expr(c))
		}
	}
	return out
}

// call lowers a method invocation.
func (fc *fnCtx) call(n *syntax.Node) ir.Value {
	l := fc.l
	b := fc.b
	p := pos(n)
	name := l.text(n.Child("name"))
	obj := n.Child("object")
	c := &ir.Call{Name: name, Recv: ir.None}
	switch {
	case n.FirstOfType("super") != nil || (obj != nil && obj.Type == "super"):
		c.Kind = ir.CallSuper
	case obj == nil:
		if cls, ok := l.staticOwner(name, true); ok {
			c.Kind, c.Qual = ir.CallStatic, cls
		} else {
			c.Kind = ir.CallFunc
		}
	default:
		if q, ok := fc.typeQualifier(obj); ok {
			c.Kind, c.Qual = ir.CallStatic, q
			break
		}
		recv := fc.expr(obj)
		if recv.IsConst() {
			t := b.Temp(fc.typeOfValue(recv))
			b.Assign(t, recv, pos(obj))
			recv = ir.V(t)
		}
		c.Kind, c.Recv = ir.CallMethod, recv
	}
	c.Args = fc.args(n.Child("arguments"))
	return b.Call(c, "", p)
}

// newExpr lowers `new T(args)`, `new T(args) { body }` and `outer.new T()`.
func (fc *fnCtx) newExpr(n *syntax.Node) ir.Value {
	l := fc.l
	p := pos(n)
	for _, c := range n.Children {
		if c.Named && c.Field == "" && c.Type != "class_body" && c.Type != "type_arguments" {
			fc.expr(c) // outer instance of `outer.new Inner()`
		}
	}
	typ := l.typeOf(n.Child("type"), fc.cls)
	args := fc.args(n.Child("arguments"))
	qual := typ
	if body := n.FirstOfType("class_body"); body != nil {
		qual = l.anonClass(fc, body, typ, n).cls.QName
	}
	return fc.b.Call(&ir.Call{Kind: ir.CallNew, Name: "<init>", Qual: qual, Recv: ir.None, Args: args}, qual, p)
}

// arrayCreation lowers `new T[n][]` and `new T[]{…}`.
func (fc *fnCtx) arrayCreation(n *syntax.Node) ir.Value {
	l := fc.l
	typ := l.typeOf(n.Child("type"), fc.cls)
	for _, d := range n.ChildrenByField("dimensions") {
		if d.Type == "dimensions_expr" {
			typ += "[]"
			fc.expr(firstNamed(d))
		} else {
			typ += dims(l.text(d))
		}
	}
	if v := n.Child("value"); v != nil {
		return fc.arrayInit(v, typ)
	}
	return fc.b.MakeList(typ, nil, pos(n))
}

// arrayInit lowers `{a, b, {c}}` of array type typ.
func (fc *fnCtx) arrayInit(n *syntax.Node, typ string) ir.Value {
	el := elemType(typ)
	var vals []ir.Value
	for _, c := range n.Children {
		if c.Named {
			vals = append(vals, fc.exprTyped(c, el))
		}
	}
	return fc.b.MakeList(typ, vals, pos(n))
}

// hasEffects reports whether an expression contains a call, an assignment
// or an increment (so && and || must keep their short-circuit order).
func hasEffects(n *syntax.Node) bool {
	switch n.Type {
	case "method_invocation", "object_creation_expression", "assignment_expression", "update_expression", "lambda_expression", "switch_expression":
		return true
	}
	for _, c := range n.Children {
		if c.Named && hasEffects(c) {
			return true
		}
	}
	return false
}

// binary lowers a binary operator; && and || with effects become branches.
func (fc *fnCtx) binary(n *syntax.Node) ir.Value {
	b := fc.b
	p := pos(n)
	op := fc.l.text(n.Child("operator"))
	left, right := n.Child("left"), n.Child("right")
	if (op == "&&" || op == "||") && left != nil && right != nil && (hasEffects(left) || hasEffects(right)) {
		res := b.Temp("boolean")
		t, f, end := b.NewBlock(), b.NewBlock(), b.NewBlock()
		fc.cond(n, t, f)
		b.SetBlock(t)
		b.Assign(res, ir.C(ir.Bool(true)), p)
		b.Jump(end, p)
		b.SetBlock(f)
		b.Assign(res, ir.C(ir.Bool(false)), p)
		b.Jump(end, p)
		b.SetBlock(end)
		return ir.V(res)
	}
	x := fc.expr(left)
	y := fc.expr(right)
	v := b.Binary(op, x, y, p)
	if op == "+" && (fc.typeOfValue(x) == stringType || fc.typeOfValue(y) == stringType) {
		b.SetType(v.Var, stringType)
	}
	return v
}

// lvalue is an assignable place.
type lvalue struct {
	kind   int // lvLocal, lvField, lvGlobal, lvIndex
	v      ir.VarID
	obj    ir.Value
	idx    ir.Value
	name   string
	typ    string
	global string
}

const (
	lvLocal = iota
	lvField
	lvGlobal
	lvIndex
)

// place evaluates the parts of an assignment target.
func (fc *fnCtx) place(n *syntax.Node) lvalue {
	l := fc.l
	for n != nil && n.Type == "parenthesized_expression" {
		n = firstNamed(n)
	}
	if n == nil {
		return lvalue{kind: lvLocal, v: fc.b.Temp("")}
	}
	switch n.Type {
	case "identifier":
		name := l.text(n)
		if v, ok := fc.lookupLocal(name); ok {
			return lvalue{kind: lvLocal, v: v, typ: fc.b.Fn.Vars[v].Type}
		}
		hops, reach := 0, true
		for c := fc.cls; c != nil; c = c.outer {
			if fi, ok := c.fields[name]; ok {
				this := fc.thisVal()
				if fi.static || this.IsNone() || !reach {
					return lvalue{kind: lvGlobal, global: "java:" + c.cls.QName + "." + name, typ: fi.typ}
				}
				return lvalue{kind: lvField, obj: fc.outerThis(this, hops, pos(n)), name: name, typ: fi.typ}
			}
			if c.inner {
				hops++
			} else {
				reach = false
			}
		}
		if cls, ok := l.statics[name]; ok {
			return lvalue{kind: lvGlobal, global: "java:" + cls + "." + name}
		}
		if this := fc.thisVal(); !this.IsNone() {
			return lvalue{kind: lvField, obj: this, name: name}
		}
		return lvalue{kind: lvGlobal, global: "java:" + fc.cls.cls.QName + "." + name}
	case "field_access":
		obj, field := n.Child("object"), n.Child("field")
		name := l.text(field)
		if obj == nil {
			return lvalue{kind: lvLocal, v: fc.b.Temp("")}
		}
		if obj.Type == "this" || obj.Type == "super" {
			if fi, ok := fc.cls.fields[name]; ok && fi.static {
				return lvalue{kind: lvGlobal, global: "java:" + fc.cls.cls.QName + "." + name, typ: fi.typ}
			}
			return lvalue{kind: lvField, obj: fc.thisVal(), name: name, typ: fc.cls.fields[name].typ}
		}
		if q, ok := fc.typeQualifier(obj); ok {
			return lvalue{kind: lvGlobal, global: "java:" + q + "." + name}
		}
		o := fc.expr(obj)
		typ := ""
		if cc := l.classes[fc.typeOfValue(o)]; cc != nil {
			typ = cc.fields[name].typ
		}
		return lvalue{kind: lvField, obj: o, name: name, typ: typ}
	case "array_access":
		arr := fc.expr(n.Child("array"))
		idx := fc.expr(n.Child("index"))
		return lvalue{kind: lvIndex, obj: arr, idx: idx, typ: elemType(fc.typeOfValue(arr))}
	}
	// Not assignable: evaluate for effects into a scratch temporary.
	fc.expr(n)
	return lvalue{kind: lvLocal, v: fc.b.Temp("")}
}

func (fc *fnCtx) load(lv lvalue, p ir.Pos) ir.Value {
	b := fc.b
	switch lv.kind {
	case lvLocal:
		return ir.V(lv.v)
	case lvField:
		return b.LoadField(lv.obj, lv.name, lv.typ, p)
	case lvGlobal:
		return b.LoadGlobal(lv.global, lv.typ, p)
	}
	return b.LoadIndex(lv.obj, lv.idx, lv.typ, p)
}

func (fc *fnCtx) store(lv lvalue, v ir.Value, p ir.Pos) {
	b := fc.b
	switch lv.kind {
	case lvLocal:
		b.Assign(lv.v, v, p)
	case lvField:
		b.StoreField(lv.obj, lv.name, v, p)
	case lvGlobal:
		b.StoreGlobal(lv.global, v, p)
	default:
		b.StoreIndex(lv.obj, lv.idx, v, p)
	}
}

// assign lowers `x = v` and compound assignments; the value is the stored one.
func (fc *fnCtx) assign(n *syntax.Node) ir.Value {
	b := fc.b
	p := pos(n)
	lv := fc.place(n.Child("left"))
	op := fc.l.text(n.Child("operator"))
	if op == "=" {
		v := fc.exprTyped(n.Child("right"), lv.typ)
		fc.store(lv, v, p)
		return v
	}
	cur := fc.load(lv, p)
	rhs := fc.expr(n.Child("right"))
	v := b.Binary(strings.TrimSuffix(op, "="), cur, rhs, p)
	if op == "+=" && (lv.typ == stringType || fc.typeOfValue(cur) == stringType || fc.typeOfValue(rhs) == stringType) {
		b.SetType(v.Var, stringType)
	}
	fc.store(lv, v, p)
	return v
}

// update lowers ++ and --, prefix and postfix.
func (fc *fnCtx) update(n *syntax.Node) ir.Value {
	b := fc.b
	p := pos(n)
	operand := firstNamed(n)
	txt := fc.l.text(n)
	prefix := strings.HasPrefix(txt, "++") || strings.HasPrefix(txt, "--")
	op := "+"
	if strings.HasPrefix(txt, "--") || strings.HasSuffix(txt, "--") {
		op = "-"
	}
	lv := fc.place(operand)
	cur := fc.load(lv, p)
	old := ir.V(b.Temp(lv.typ))
	b.Assign(old.Var, cur, p)
	nv := b.Binary(op, old, ir.C(ir.Int(1)), p)
	fc.store(lv, nv, p)
	if prefix {
		return nv
	}
	return old
}

// ternary lowers c ? a : b as branches assigning one temporary.
func (fc *fnCtx) ternary(n *syntax.Node) ir.Value {
	b := fc.b
	p := pos(n)
	res := b.Temp("")
	t, f, end := b.NewBlock(), b.NewBlock(), b.NewBlock()
	fc.cond(n.Child("condition"), t, f)
	b.SetBlock(t)
	x := fc.expr(n.Child("consequence"))
	b.Assign(res, x, p)
	b.Jump(end, p)
	b.SetBlock(f)
	y := fc.expr(n.Child("alternative"))
	b.Assign(res, y, p)
	b.Jump(end, p)
	b.SetBlock(end)
	if tx, ty := fc.typeOfValue(x), fc.typeOfValue(y); tx == ty || ty == "" {
		b.SetType(res, tx)
	} else if tx == "" {
		b.SetType(res, ty)
	}
	return ir.V(res)
}

// instanceOf lowers `x instanceof T` and `x instanceof T t` (binding t).
func (fc *fnCtx) instanceOf(n *syntax.Node) ir.Value {
	b := fc.b
	l := fc.l
	p := pos(n)
	x := fc.expr(n.Child("left"))
	right := n.Child("right")
	name := n.Child("name")
	if right == nil {
		for _, c := range n.Children {
			if c.Type == "pattern" || c.Type == "record_pattern" || c.Type == "type_pattern" {
				right = c
			}
		}
	}
	if right != nil && (right.Type == "type_pattern" || right.Type == "pattern" || right.Type == "record_pattern") {
		v, _ := fc.pattern(right, x, nil)
		return v
	}
	typ := l.typeOf(right, fc.cls)
	v := b.Binary("instanceof", x, ir.C(ir.Str(typ)), p)
	if name != nil {
		id := fc.declare(l.text(name), typ)
		b.Assign(id, b.Cast(typ, x, pos(name)), pos(name))
	}
	return v
}

// newLambda starts a closure function nested in fc.
func (fc *fnCtx) newLambda(n *syntax.Node) *fnCtx {
	l := fc.l
	l.lambdas++
	b := ir.NewBuilder(l.file, "<lambda>", fc.b.Fn.QName+"$lambda"+strconv.Itoa(l.lambdas))
	lc := &fnCtx{l: l, b: b, parent: fc, cls: fc.cls, lambda: true, static: fc.static, this: ir.NoVar, scope: map[string]ir.VarID{}}
	fn := b.Fn
	fn.Parent, fn.Class, fn.Static, fn.Pos = fc.b.Fn, fc.cls.cls, fc.static, pos(n)
	l.file.Funcs = append(l.file.Funcs, fn)
	return lc
}

// lambdaExpr lowers a lambda into its own function and returns the closure.
func (fc *fnCtx) lambdaExpr(n *syntax.Node) ir.Value {
	lc := fc.newLambda(n)
	if ps := n.Child("parameters"); ps != nil {
		if ps.Type == "identifier" {
			name := fc.l.text(ps)
			lc.bind(name, lc.b.Param(name, "", nil))
		} else {
			lc.params(ps)
		}
	}
	body := n.Child("body")
	if body != nil && body.Type == "block" {
		lc.block(body)
	} else if body != nil {
		v := lc.expr(body)
		lc.b.Return(v, pos(body))
	}
	lc.finish(n)
	return fc.b.Closure(lc.b.Fn, pos(n))
}

// methodRef lowers X::m into a one-parameter closure calling m: a static
// call for a type X, a call on the captured receiver value otherwise, a
// constructor call for X::new.
func (fc *fnCtx) methodRef(n *syntax.Node) ir.Value {
	l := fc.l
	p := pos(n)
	parts := n.NamedChildren()
	if len(parts) == 0 {
		return fc.b.Opaque(nil, p)
	}
	obj := parts[0]
	var name *syntax.Node
	for _, c := range parts[1:] {
		if c.Type == "identifier" {
			name = c
		}
	}
	// Evaluate a receiver expression in the enclosing function.
	var recvName, recvType string
	qual, isType := "", false
	switch {
	case obj.Type == "super" || obj.Type == "this":
	case obj.Type == "array_type" || obj.Type == "generic_type" || obj.Type == "scoped_type_identifier" || obj.Type == "type_identifier":
		qual, isType = l.typeOf(obj, fc.cls), true
	default:
		if q, ok := fc.typeQualifier(obj); ok {
			qual, isType = q, true
		} else {
			v := fc.expr(obj)
			l.lambdas++
			recvName = "$mr" + strconv.Itoa(l.lambdas)
			recvType = fc.typeOfValue(v)
			id := fc.b.Var(recvName, recvType)
			fc.b.Assign(id, v, p)
		}
	}
	lc := fc.newLambda(n)
	a0 := lc.b.Param("a0", "", nil)
	args := []ir.Value{ir.V(a0)}
	c := &ir.Call{Recv: ir.None, Args: args}
	switch {
	case name == nil && strings.HasSuffix(qual, "[]"):
		lc.b.Return(lc.b.MakeList(qual, nil, p), p)
		lc.finish(n)
		return fc.b.Closure(lc.b.Fn, p)
	case name == nil:
		c.Kind, c.Name, c.Qual = ir.CallNew, "<init>", qual
	case obj.Type == "super":
		c.Kind, c.Name = ir.CallSuper, l.text(name)
	case obj.Type == "this":
		c.Kind, c.Name, c.Recv = ir.CallMethod, l.text(name), lc.thisVal()
	case isType:
		c.Kind, c.Name, c.Qual = ir.CallStatic, l.text(name), qual
	default:
		c.Kind, c.Name, c.Recv = ir.CallMethod, l.text(name), ir.V(lc.b.Captured(recvName, recvType))
	}
	typ := ""
	if c.Kind == ir.CallNew {
		typ = qual
	}
	lc.b.Return(lc.b.Call(c, typ, p), p)
	lc.finish(n)
	return fc.b.Closure(lc.b.Fn, p)
}
