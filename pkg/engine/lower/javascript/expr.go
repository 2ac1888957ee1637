package javascript

import (
	"math"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// setterPrefix names the setter a property assignment calls: `o.p = v`
// also calls o.set:p(v) (see the package documentation).
const setterPrefix = "set:"

// getterPrefix names getters declared with `get p()`.
const getterPrefix = "get:"

// isExpression reports whether a node type is an expression.
func isExpression(n *syntax.Node) bool {
	switch n.Type {
	case "identifier", "this", "super", "number", "string", "template_string", "regex", "true", "false", "null", "undefined",
		"member_expression", "subscript_expression", "call_expression", "new_expression", "binary_expression",
		"unary_expression", "update_expression", "assignment_expression", "augmented_assignment_expression",
		"ternary_expression", "await_expression", "yield_expression", "arrow_function", "function_expression", "function",
		"generator_function", "class", "object", "array", "sequence_expression", "parenthesized_expression",
		"as_expression", "satisfies_expression", "non_null_expression", "type_assertion", "jsx_element",
		"jsx_self_closing_element", "jsx_fragment", "meta_property":
		return true
	}
	return false
}

// expr lowers an expression and returns its value.
func (fc *fnCtx) expr(n *syntax.Node) ir.Value {
	if n == nil {
		return ir.C(ir.Null())
	}
	l := fc.l
	p := pos(n)
	switch n.Type {
	case "parenthesized_expression", "non_null_expression", "satisfies_expression":
		if c := firstNamed(n); c != nil {
			return fc.expr(c)
		}
		return ir.C(ir.Null())
	case "as_expression", "type_assertion":
		return fc.asExpr(n)
	case "identifier", "shorthand_property_identifier":
		return fc.load(l.text(n), n)
	case "undefined", "null":
		return ir.C(ir.Null())
	case "true":
		return ir.C(ir.Bool(true))
	case "false":
		return ir.C(ir.Bool(false))
	case "number":
		return ir.C(numberConst(l.text(n)))
	case "string":
		return ir.C(ir.Str(decodeString(l.src, n)))
	case "template_string":
		return fc.template(n)
	case "regex":
		pat, flags := "", ""
		if c := n.Child("pattern"); c != nil {
			pat = l.text(c)
		}
		if c := n.Child("flags"); c != nil {
			flags = l.text(c)
		}
		return fc.b.Call(&ir.Call{Kind: ir.CallNew, Name: "<init>", Qual: "RegExp", Recv: ir.None, Args: []ir.Value{ir.C(ir.Str(pat)), ir.C(ir.Str(flags))}}, "RegExp", p)
	case "this", "super":
		return fc.thisVal(n)
	case "member_expression":
		return fc.member(n)
	case "subscript_expression":
		return fc.subscript(n)
	case "call_expression":
		return fc.call(n)
	case "new_expression":
		return fc.newExpr(n)
	case "binary_expression":
		return fc.binary(n)
	case "unary_expression":
		return fc.unary(n)
	case "update_expression":
		return fc.update(n)
	case "assignment_expression":
		return fc.assign(n)
	case "augmented_assignment_expression":
		return fc.augAssign(n)
	case "ternary_expression":
		return fc.ternary(n)
	case "await_expression":
		return fc.expr(firstNamed(n))
	case "yield_expression":
		if c := firstNamed(n); c != nil {
			fc.expr(c)
		}
		return fc.b.Opaque(nil, p)
	case "arrow_function", "function_expression", "function", "generator_function":
		return fc.closure(n, "")
	case "class":
		return fc.classValue(n, "", "")
	case "object":
		return fc.object(n)
	case "array":
		return fc.array(n)
	case "sequence_expression":
		v := ir.C(ir.Null())
		for _, c := range n.Children {
			if c.Named && !isComment(c) {
				v = fc.expr(c)
			}
		}
		return v
	case "spread_element":
		return fc.b.LoadIndex(fc.expr(firstNamed(n)), ir.None, "", p)
	case "jsx_element", "jsx_self_closing_element", "jsx_fragment":
		return fc.jsx(n)
	}
	// meta properties, syntax errors and unknown forms: evaluate what they
	// contain and give an opaque value
	var args []ir.Value
	for _, c := range n.Children {
		if c.Named && isExpression(c) {
			args = append(args, fc.expr(c))
		}
	}
	return fc.b.Opaque(args, p)
}

// asExpr lowers `x as T` and `<T>x`: a cast when T names a class or
// interface, the value itself otherwise.
func (fc *fnCtx) asExpr(n *syntax.Node) ir.Value {
	var val, typ *syntax.Node
	for _, c := range n.Children {
		if !c.Named || isComment(c) {
			continue
		}
		if n.Type == "type_assertion" && c.Type == "type_arguments" {
			typ = firstNamed(c)
			continue
		}
		if val == nil && isExpression(c) {
			val = c
		} else {
			typ = c
		}
	}
	v := fc.expr(val)
	if t := fc.l.typeOf(typ); t != "" && t != "String" {
		return fc.b.Cast(t, v, pos(n))
	}
	return v
}

// load reads a name.
func (fc *fnCtx) load(name string, at *syntax.Node) ir.Value {
	p := pos(at)
	r := fc.resolve(name)
	switch r.kind {
	case refLocal:
		return ir.V(r.v)
	case refTop:
		return fc.b.LoadGlobal(r.qual, r.typ, p)
	case refFunc, refClass:
		return fc.b.LoadGlobal(r.qual, "", p)
	case refImport:
		return fc.b.LoadGlobal(r.imp.qual, "", p)
	}
	switch name {
	case "arguments":
		if args, ok := fc.arguments(); ok {
			return fc.b.MakeList("Array", args, p)
		}
	case "undefined":
		return ir.C(ir.Null())
	case "NaN":
		return ir.C(ir.Float(math.NaN()))
	case "Infinity":
		return ir.C(ir.Float(math.Inf(1)))
	}
	return fc.b.LoadGlobal(name, "", p)
}

// arguments returns the parameters that `arguments` stands for: those of
// the nearest enclosing function that is not an arrow function (captured
// by name from an arrow function).
func (fc *fnCtx) arguments() ([]ir.Value, bool) {
	owner := fc
	for owner != nil && owner.arrow {
		owner = owner.parent
	}
	if owner == nil || owner.module {
		return nil, false
	}
	var out []ir.Value
	for _, p := range owner.b.Fn.Params {
		if owner == fc {
			out = append(out, ir.V(p.Var))
		} else if r := fc.resolve(owner.b.Fn.Vars[p.Var].Name); r.kind == refLocal {
			out = append(out, ir.V(r.v))
		}
	}
	return out, true
}

// storeName assigns a name.
func (fc *fnCtx) storeName(name string, v ir.Value, p ir.Pos) {
	r := fc.resolve(name)
	switch r.kind {
	case refLocal:
		fc.b.Assign(r.v, v, p)
		if r.qual != "" {
			fc.b.StoreGlobal(r.qual, ir.V(r.v), p)
		}
	case refTop, refFunc, refClass:
		fc.b.StoreGlobal(r.qual, v, p)
	case refImport:
		fc.b.StoreGlobal(r.imp.qual, v, p)
	default:
		fc.b.StoreGlobal(name, v, p)
		if v.IsVar() {
			fc.b.Call(&ir.Call{Kind: ir.CallFunc, Name: setterPrefix + name, Recv: ir.None, Args: []ir.Value{v}}, "", p)
		}
	}
}

// thisVal is the receiver: the method's this, the enclosing one in arrow
// functions, a local of its own in plain functions.
func (fc *fnCtx) thisVal(n *syntax.Node) ir.Value {
	if fc.this != ir.NoVar {
		return ir.V(fc.this)
	}
	if fc.module && fc.parent == nil {
		return fc.b.LoadGlobal(fc.l.mod, "", pos(n))
	}
	if s, _ := fc.lookupLocal("this"); s != nil {
		return ir.V(s.v)
	}
	if fc.arrow && fc.parent != nil {
		if r := fc.resolve("this"); r.kind == refLocal {
			return ir.V(r.v)
		}
	}
	v := fc.b.Declare(fc.fresh("this"), "")
	fc.scopes[0]["this"] = &sym{v: v}
	return ir.V(v)
}

// staticKind classifies an expression that denotes a statically known
// thing rather than a value computed at run time.
type staticKind uint8

const (
	stNone      staticKind = iota
	stGlobalObj            // window, globalThis, self, global
	stGlobal               // a platform global (process, document, Math), possibly with one property (process.env)
	stModule               // an imported module value
	stMember               // a member of an imported module (named import, require('m').x)
	stClass                // a class or namespace of the file
)

type staticRef struct {
	kind  staticKind
	qual  string
	depth int  // globals: number of components
	rel   bool // modules and members: a repository file
}

// static recognises expressions that denote a global, an imported module or
// member, or a class of the file.
func (fc *fnCtx) staticOf(n *syntax.Node) staticRef {
	l := fc.l
	n = unwrap(n)
	if n == nil {
		return staticRef{}
	}
	switch n.Type {
	case "identifier":
		name := l.text(n)
		r := fc.resolve(name)
		switch r.kind {
		case refImport:
			if r.imp.module {
				return staticRef{kind: stModule, qual: r.imp.qual, rel: r.imp.rel}
			}
			return staticRef{kind: stMember, qual: r.imp.qual, rel: r.imp.rel}
		case refClass:
			return staticRef{kind: stClass, qual: r.qual}
		case refGlobal:
			if globalObjects[name] {
				return staticRef{kind: stGlobalObj}
			}
			if name == "undefined" || name == "NaN" || name == "Infinity" {
				return staticRef{}
			}
			return staticRef{kind: stGlobal, qual: name, depth: 1}
		}
	case "call_expression":
		if imp, ok := l.requireRef(n); ok && fc.resolve("require").kind == refGlobal {
			return staticRef{kind: stModule, qual: imp.qual, rel: imp.rel}
		}
	case "member_expression":
		prop := n.Child("property")
		if prop == nil || prop.Type != "property_identifier" {
			return staticRef{}
		}
		name := l.text(prop)
		base := fc.staticOf(n.Child("object"))
		switch base.kind {
		case stGlobalObj:
			if globalObjects[name] {
				return base
			}
			if fc.resolve(name).kind != refGlobal {
				return staticRef{}
			}
			return staticRef{kind: stGlobal, qual: name, depth: 1}
		case stGlobal:
			if base.depth == 1 {
				return staticRef{kind: stGlobal, qual: base.qual + "." + name, depth: 2}
			}
		case stModule, stMember:
			if base.kind == stMember && base.rel {
				return staticRef{}
			}
			return staticRef{kind: stMember, qual: base.qual + "." + name, rel: base.rel}
		case stClass:
			return staticRef{kind: stClass, qual: base.qual + "." + name}
		}
	}
	return staticRef{}
}

// member lowers a property read.
func (fc *fnCtx) member(n *syntax.Node) ir.Value {
	p := pos(n)
	prop := n.Child("property")
	obj := n.Child("object")
	if prop == nil || obj == nil {
		return fc.b.Opaque(nil, p)
	}
	if st := fc.staticOf(n); st.kind != stNone {
		if st.kind == stGlobalObj {
			return fc.b.LoadGlobal("globalThis", "", p)
		}
		return fc.b.LoadGlobal(st.qual, "", p)
	}
	o := fc.expr(obj)
	return fc.b.LoadField(o, fc.l.text(prop), "", p)
}

// subscript lowers obj[index]: a constant string key is a field, a
// constant number an index.
func (fc *fnCtx) subscript(n *syntax.Node) ir.Value {
	o := fc.expr(n.Child("object"))
	idx := n.Child("index")
	if s, ok := fc.l.stringValue(idx); ok {
		return fc.b.LoadField(o, s, "", pos(n))
	}
	return fc.index(o, fc.expr(idx), pos(n))
}

// index reads o[k], a field when k is a constant string.
func (fc *fnCtx) index(o, k ir.Value, p ir.Pos) ir.Value {
	if k.IsConst() && k.Const.IsStr() {
		return fc.b.LoadField(o, k.Const.Str, "", p)
	}
	return fc.b.LoadIndex(o, k, "", p)
}

// storeTarget assigns v to an assignable expression.
func (fc *fnCtx) storeTarget(target *syntax.Node, v ir.Value, p ir.Pos) {
	l := fc.l
	target = unwrap(target)
	switch target.Type {
	case "identifier", "shorthand_property_identifier_pattern":
		fc.storeName(l.text(target), v, p)
	case "member_expression":
		prop := target.Child("property")
		if prop == nil {
			return
		}
		fc.storeMember(target.Child("object"), l.text(prop), v, p)
	case "subscript_expression":
		obj := target.Child("object")
		idx := target.Child("index")
		if s, ok := l.stringValue(idx); ok {
			fc.storeMember(obj, s, v, p)
			return
		}
		o := fc.expr(obj)
		k := fc.expr(idx)
		fc.b.StoreIndex(o, k, v, p)
	case "object_pattern", "array_pattern", "object", "array":
		fc.bindPattern(target, v, bindAssign, p)
	default:
		fc.expr(target)
	}
}

// storeMember assigns obj.name = v: a field store followed by a call of the
// property's setter `set:name` (DOM and framework properties such as
// innerHTML or location.href are setters), or a global store for globals.
func (fc *fnCtx) storeMember(obj *syntax.Node, name string, v ir.Value, p ir.Pos) {
	st := fc.staticOf(obj)
	switch st.kind {
	case stGlobalObj:
		fc.storeName(name, v, p)
		return
	case stGlobal:
		if st.depth == 1 {
			fc.b.StoreGlobal(st.qual+"."+name, v, p)
			if v.IsVar() {
				fc.b.Call(&ir.Call{Kind: ir.CallStatic, Qual: st.qual, Recv: ir.None, Name: setterPrefix + name, Args: []ir.Value{v}}, "", p)
			}
			return
		}
	case stModule, stMember, stClass:
		fc.b.StoreGlobal(st.qual+"."+name, v, p)
		return
	}
	isThis := unwrap(obj) != nil && unwrap(obj).Type == "this"
	o := fc.expr(obj)
	fc.b.StoreField(o, name, v, p)
	if !isThis && v.IsVar() {
		fc.b.Call(&ir.Call{Kind: ir.CallMethod, Name: setterPrefix + name, Recv: o, Args: []ir.Value{v}}, "", p)
	}
}

// assign lowers `left = right`.
func (fc *fnCtx) assign(n *syntax.Node) ir.Value {
	l := fc.l
	left, right := n.Child("left"), n.Child("right")
	p := pos(n)
	if left == nil || right == nil {
		return ir.C(ir.Null())
	}
	if l.isModuleExports(left) {
		return fc.exportValue(right, n)
	}
	if name, ok := l.exportTarget(left); ok {
		return fc.exportNamed(name, right, n)
	}
	if fc.protoAssign(left, right) {
		return ir.C(ir.Null())
	}
	lu := unwrap(left)
	if lu.Type == "identifier" && isFunctionNode(unwrap(right)) {
		v := fc.closure(unwrap(right), l.text(lu))
		fc.storeName(l.text(lu), v, p)
		return v
	}
	if lu.Type == "member_expression" || lu.Type == "subscript_expression" {
		// evaluate the object before the value, as JavaScript does
		obj := lu.Child("object")
		if st := fc.staticOf(obj); st.kind == stNone && unwrap(obj).Type != "this" && !isSimple(unwrap(obj)) {
			o := fc.expr(obj)
			tmp := fc.b.Temp("")
			fc.b.Assign(tmp, o, pos(obj))
			v := fc.expr(right)
			fc.storeOn(ir.V(tmp), lu, v, p)
			return v
		}
	}
	v := fc.expr(right)
	fc.storeTarget(left, v, p)
	return v
}

// isSimple reports whether evaluating n twice is harmless and cheap.
func isSimple(n *syntax.Node) bool {
	return n != nil && (n.Type == "identifier" || n.Type == "this")
}

// storeOn assigns through an already evaluated object.
func (fc *fnCtx) storeOn(o ir.Value, target *syntax.Node, v ir.Value, p ir.Pos) {
	l := fc.l
	name := ""
	if target.Type == "member_expression" {
		if prop := target.Child("property"); prop != nil {
			name = l.text(prop)
		}
	} else if s, ok := l.stringValue(target.Child("index")); ok {
		name = s
	} else {
		fc.b.StoreIndex(o, fc.expr(target.Child("index")), v, p)
		return
	}
	fc.b.StoreField(o, name, v, p)
	if v.IsVar() {
		fc.b.Call(&ir.Call{Kind: ir.CallMethod, Name: setterPrefix + name, Recv: o, Args: []ir.Value{v}}, "", p)
	}
}

// exportNamed lowers `exports.name = v` / `module.exports.name = v`.
func (fc *fnCtx) exportNamed(name string, right *syntax.Node, n *syntax.Node) ir.Value {
	l := fc.l
	r := unwrap(right)
	q := l.mod + "." + name
	var v ir.Value
	switch {
	case isFunctionNode(r):
		fn := l.function(r, funcInfo{name: name, qname: q}, fc, true)
		l.exported = append(l.exported, exportedFunc{qname: fn.QName, name: name})
		v = fc.b.Closure(fn, pos(r))
	case r.Type == "identifier" && l.top[l.text(r)] != nil && l.top[l.text(r)].kind == topFunc:
		fc.export(name, l.text(r), n)
		return fc.load(l.text(r), r)
	default:
		v = fc.expr(right)
	}
	fc.b.StoreGlobal(q, v, pos(n))
	return v
}

// augAssign lowers compound assignments: `x op= y` is `x = x op y`;
// logical ones (&&=, ||=, ??=) assign on a branch.
func (fc *fnCtx) augAssign(n *syntax.Node) ir.Value {
	left, right := n.Child("left"), n.Child("right")
	op := strings.TrimSuffix(fc.l.text(n.Child("operator")), "=")
	p := pos(n)
	cur := fc.expr(left)
	switch op {
	case "&&", "||", "??":
		r := fc.logical(op, cur, right, p)
		fc.storeTarget(left, r, p)
		return r
	}
	v := fc.b.Binary(op, cur, fc.expr(right), p)
	fc.storeTarget(left, v, p)
	return v
}

// update lowers ++ and --.
func (fc *fnCtx) update(n *syntax.Node) ir.Value {
	arg := n.Child("argument")
	opn := n.Child("operator")
	p := pos(n)
	op := "+"
	if opn != nil && fc.l.text(opn) == "--" {
		op = "-"
	}
	old := fc.expr(arg)
	if old.IsVar() {
		tmp := fc.b.Temp("")
		fc.b.Assign(tmp, old, p)
		old = ir.V(tmp)
	}
	nv := fc.b.Binary(op, old, ir.C(ir.Int(1)), p)
	fc.storeTarget(arg, nv, p)
	if opn != nil && opn.Start < arg.Start {
		return nv
	}
	return old
}

// binary lowers binary operators; && || ?? branch when the right side has
// effects.
func (fc *fnCtx) binary(n *syntax.Node) ir.Value {
	op := fc.l.text(n.Child("operator"))
	p := pos(n)
	left := fc.expr(n.Child("left"))
	switch op {
	case "&&", "||", "??":
		return fc.logical(op, left, n.Child("right"), p)
	}
	right := fc.expr(n.Child("right"))
	v := fc.b.Binary(op, left, right, p)
	if op == "+" && (isStrConst(left) || isStrConst(right) || fc.isString(left) || fc.isString(right)) {
		fc.b.SetType(v.Var, "String")
	}
	return v
}

func isStrConst(v ir.Value) bool { return v.IsConst() && v.Const.IsStr() }

func (fc *fnCtx) isString(v ir.Value) bool {
	return v.IsVar() && fc.b.Fn.Vars[v.Var].Type == "String"
}

// logical lowers a short-circuit operator whose left value is known.
func (fc *fnCtx) logical(op string, left ir.Value, rightNode *syntax.Node, p ir.Pos) ir.Value {
	if !hasEffects(rightNode) {
		return fc.b.Binary(op, left, fc.expr(rightNode), p)
	}
	return fc.orElse(left, rightNode, p, func(evalRight, join int) {
		switch op {
		case "&&":
			fc.b.If(left, evalRight, join, p)
		case "||":
			fc.b.If(left, join, evalRight, p)
		default: // ??
			isNull := fc.b.Binary("==", left, ir.C(ir.Null()), p)
			fc.b.If(isNull, evalRight, join, p)
		}
	})
}

// orElse is the value v, replaced by the value of alt where branch, which
// ends the current block, goes to evalAlt rather than join.
func (fc *fnCtx) orElse(v ir.Value, alt *syntax.Node, p ir.Pos, branch func(evalAlt, join int)) ir.Value {
	r := fc.b.Temp("")
	fc.b.Assign(r, v, p)
	evalAlt, join := fc.b.NewBlock(), fc.b.NewBlock()
	branch(evalAlt, join)
	fc.b.SetBlock(evalAlt)
	fc.b.Assign(r, fc.expr(alt), p)
	fc.b.Jump(join, p)
	fc.b.SetBlock(join)
	return ir.V(r)
}

// hasEffects reports whether evaluating n may call code or assign.
func hasEffects(n *syntax.Node) bool {
	if n == nil {
		return false
	}
	switch n.Type {
	case "call_expression", "new_expression", "assignment_expression", "augmented_assignment_expression",
		"update_expression", "await_expression", "yield_expression", "ternary_expression", "jsx_element", "jsx_self_closing_element":
		return true
	case "arrow_function", "function_expression", "function", "generator_function", "class":
		return false
	case "unary_expression":
		if op := n.Child("operator"); op != nil && op.Type == "delete" {
			return true
		}
	case "binary_expression":
		if op := n.Child("operator"); op != nil && (op.Type == "&&" || op.Type == "||" || op.Type == "??") {
			// nested short-circuits branch themselves
			return hasEffects(n.Child("left")) || hasEffects(n.Child("right"))
		}
	}
	for _, c := range n.Children {
		if c.Named && hasEffects(c) {
			return true
		}
	}
	return false
}

// ternary lowers c ? a : b as branches.
func (fc *fnCtx) ternary(n *syntax.Node) ir.Value {
	p := pos(n)
	cond := fc.expr(n.Child("condition"))
	r := fc.b.Temp("")
	then, els, join := fc.b.NewBlock(), fc.b.NewBlock(), fc.b.NewBlock()
	fc.b.If(cond, then, els, p)
	fc.b.SetBlock(then)
	fc.b.Assign(r, fc.expr(n.Child("consequence")), p)
	fc.b.Jump(join, p)
	fc.b.SetBlock(els)
	fc.b.Assign(r, fc.expr(n.Child("alternative")), p)
	fc.b.Jump(join, p)
	fc.b.SetBlock(join)
	return ir.V(r)
}

// unary lowers unary operators; void gives undefined and delete stores
// undefined into the property.
func (fc *fnCtx) unary(n *syntax.Node) ir.Value {
	op := fc.l.text(n.Child("operator"))
	arg := n.Child("argument")
	p := pos(n)
	switch op {
	case "void":
		fc.expr(arg)
		return ir.C(ir.Null())
	case "delete":
		a := unwrap(arg)
		if a != nil && (a.Type == "member_expression" || a.Type == "subscript_expression") {
			fc.storeTargetPlain(a, ir.C(ir.Null()), p)
		} else {
			fc.expr(arg)
		}
		return ir.C(ir.Bool(true))
	}
	v := fc.expr(arg)
	if v.IsConst() {
		if c := foldUnary(op, v.Const); c != nil {
			return ir.C(c)
		}
	}
	return fc.b.Unary(op, v, p)
}

// foldUnary folds negative number literals and negated booleans.
func foldUnary(op string, c *ir.Const) *ir.Const {
	switch {
	case op == "-" && c.Kind == ir.ConstInt:
		return ir.Int(-c.Int)
	case op == "-" && c.Kind == ir.ConstFloat:
		return ir.Float(-c.Float)
	case op == "!" && c.Kind == ir.ConstBool:
		return ir.Bool(!c.Bool)
	}
	return nil
}

// storeTargetPlain stores into a property without calling its setter.
func (fc *fnCtx) storeTargetPlain(target *syntax.Node, v ir.Value, p ir.Pos) {
	o := fc.expr(target.Child("object"))
	if target.Type == "member_expression" {
		if prop := target.Child("property"); prop != nil {
			fc.b.StoreField(o, fc.l.text(prop), v, p)
		}
		return
	}
	if s, ok := fc.l.stringValue(target.Child("index")); ok {
		fc.b.StoreField(o, s, v, p)
		return
	}
	fc.b.StoreIndex(o, fc.expr(target.Child("index")), v, p)
}

// template lowers a template literal as a concatenation.
func (fc *fnCtx) template(n *syntax.Node) ir.Value {
	str := lower.NewInterpolation(fc.b)
	for _, c := range n.Children {
		if t, ok := fc.templateText(c); ok {
			str.Text(t)
		} else if c.Type == "template_substitution" {
			str.Value(pos(c), func() ir.Value { return fc.expr(firstNamed(c)) })
		}
	}
	return str.Done(pos(n))
}

// templateText is the literal text of a part of a template literal, false
// for a substitution.
func (fc *fnCtx) templateText(c *syntax.Node) (string, bool) {
	switch c.Type {
	case "string_fragment":
		return c.Text(fc.l.src), true
	case "escape_sequence":
		return decodeEscape(c.Text(fc.l.src)), true
	}
	return "", false
}

// object lowers an object literal: a map of constant keys; computed keys
// use their value; spread properties are copied with Object.assign; methods
// and function values are closures.
func (fc *fnCtx) object(n *syntax.Node) ir.Value {
	l := fc.l
	var kv []ir.Value
	var spreads []*syntax.Node
	for _, c := range n.Children {
		if !c.Named || isComment(c) {
			continue
		}
		switch c.Type {
		case "shorthand_property_identifier":
			kv = append(kv, ir.C(ir.Str(l.text(c))), fc.load(l.text(c), c))
		case "pair":
			k, v := c.Child("key"), c.Child("value")
			if k == nil || v == nil {
				continue
			}
			key := fc.objectKey(k)
			var val ir.Value
			if isFunctionNode(unwrap(v)) {
				name := l.propertyKeyName(k)
				val = fc.closure(unwrap(v), name)
			} else {
				val = fc.expr(v)
			}
			kv = append(kv, key, val)
		case "method_definition":
			k := c.Child("name")
			if k == nil {
				continue
			}
			name := l.propertyKeyName(k)
			key := fc.objectKey(k)
			if name == "" {
				name = "<lambda>"
			}
			kv = append(kv, key, fc.closure(c, name))
		case "spread_element":
			spreads = append(spreads, c)
		}
	}
	obj := fc.b.MakeMap("Object", kv, pos(n))
	for _, s := range spreads {
		fc.b.Call(&ir.Call{Kind: ir.CallStatic, Qual: "Object", Name: "assign", Recv: ir.None, Args: []ir.Value{obj, fc.expr(firstNamed(s))}}, "Object", pos(s))
	}
	return obj
}

// objectKey is the key value of an object literal property.
func (fc *fnCtx) objectKey(k *syntax.Node) ir.Value {
	if k.Type == "computed_property_name" {
		if inner := firstNamed(k); inner != nil {
			return fc.expr(inner)
		}
	}
	if k.Type == "number" {
		return ir.C(ir.Str(numberConst(fc.l.text(k)).String()))
	}
	return ir.C(ir.Str(fc.l.propertyKeyName(k)))
}

// array lowers an array literal; spread elements are appended at unknown
// positions after the others.
func (fc *fnCtx) array(n *syntax.Node) ir.Value {
	var elems, spreads []ir.Value
	vals, spread := fc.elements(n)
	for i, v := range vals {
		if spread[i] {
			spreads = append(spreads, v)
		} else {
			elems = append(elems, v)
		}
	}
	arr := fc.b.MakeList("Array", elems, pos(n))
	for _, s := range spreads {
		fc.b.StoreIndex(arr, ir.None, s, pos(n))
	}
	return arr
}
