package javascript

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// classInfo is a class being lowered.
type classInfo struct {
	cls *ir.Class
}

// classDecl lowers a class declaration statement.
func (fc *fnCtx) classDecl(n *syntax.Node) {
	name := n.Child("name")
	if name == nil {
		return
	}
	fc.lowerClass(n, fc.l.text(name), "")
}

// classQName is the qualified name of a class named name declared here.
func (fc *fnCtx) classQName(name string) string {
	l := fc.l
	if fc.module && len(fc.scopes) == 1 {
		if d := l.top[name]; d != nil && d.kind == topClass {
			return d.qname
		}
		return l.mod + "." + name
	}
	return fc.b.Fn.QName + "$" + name
}

// classValue lowers a class expression and returns the class value (a read
// of the global that names it). qname forces the qualified name (an
// exported class expression).
func (fc *fnCtx) classValue(n *syntax.Node, name, qname string) ir.Value {
	return fc.b.LoadGlobal(fc.lowerClass(n, name, qname), "", pos(n))
}

// lowerClass lowers a class and returns its qualified name.
func (fc *fnCtx) lowerClass(n *syntax.Node, name, qname string) string {
	l := fc.l
	if name == "" {
		if nm := n.Child("name"); nm != nil {
			name = l.text(nm)
		}
	}
	if qname == "" {
		if name != "" {
			qname = fc.classQName(name)
		} else {
			l.lambdas++
			qname = fc.b.Fn.QName + "$class" + itoa(l.lambdas)
			name = qname
		}
	}
	cls := &ir.Class{Name: name, QName: qname, File: l.file, Pos: pos(n), Annotations: l.decorators(n)}
	if p := n.Parent; p != nil && p.Type == "export_statement" {
		cls.Annotations = append(l.decorators(p), cls.Annotations...)
	}
	l.file.Classes = append(l.file.Classes, cls)
	if !(fc.module && len(fc.scopes) == 1) && name != "" {
		fc.scopes[len(fc.scopes)-1][name] = &sym{v: ir.NoVar, class: qname}
	}
	for _, c := range n.Children {
		if c.Type == "class_heritage" {
			cls.Super = fc.heritage(c)
		}
	}
	ci := &classInfo{cls: cls}
	body := n.Child("body")
	var ctor *syntax.Node
	var instFields []*syntax.Node
	if body != nil {
		for _, m := range body.Children {
			switch m.Type {
			case "method_definition":
				if k := m.Child("name"); k != nil && l.text(k) == "constructor" {
					ctor = m
				}
			case "field_definition", "public_field_definition":
				static := l.hasKeyword(m, fieldName(m), "static")
				fname := l.propertyKeyName(fieldName(m))
				cls.Fields = append(cls.Fields, ir.Field{Name: fname, Type: l.typeOf(m.Child("type")), Static: static, Pos: pos(m)})
				if !static && m.Child("value") != nil {
					instFields = append(instFields, m)
				}
			}
		}
	}
	initFields := func(mc *fnCtx) {
		for _, f := range instFields {
			fname := l.propertyKeyName(fieldName(f))
			v := f.Child("value")
			var val ir.Value
			if isFunctionNode(unwrap(v)) {
				val = mc.closure(unwrap(v), fname)
			} else {
				val = mc.expr(v)
			}
			mc.b.StoreField(ir.V(mc.this), fname, val, pos(f))
		}
	}
	if ctor == nil && len(instFields) > 0 {
		b := ir.NewBuilder(l.file, "<init>", l.uniqueQName(qname+".<init>"))
		b.Fn.Class, b.Fn.Pos = cls, pos(n)
		if fc.b.Fn != nil && !(fc.module && len(fc.scopes) == 1) {
			b.Fn.Parent = fc.b.Fn
		}
		l.file.Funcs = append(l.file.Funcs, b.Fn)
		mc := newFnCtx(l, b, fc)
		mc.class = ci
		mc.this = b.This("this", qname)
		mc.scopes[0]["this"] = &sym{v: mc.this}
		initFields(mc)
		cls.Methods = append(cls.Methods, b.Finish(pos(n)))
	}
	if body == nil {
		return qname
	}
	var pending []ir.Annotation // decorators precede the member they decorate
	for _, m := range body.Children {
		if m.Type == "decorator" {
			if a, ok := l.decorator(m); ok {
				pending = append(pending, a)
			}
			continue
		}
		anns := pending
		if m.Named && !isComment(m) {
			pending = nil
		}
		switch m.Type {
		case "method_definition", "abstract_method_signature", "method_signature":
			k := m.Child("name")
			if k == nil {
				continue
			}
			mname := l.propertyKeyName(k)
			if mname == "" {
				mname = l.text(k)
			}
			fi := funcInfo{class: ci, static: l.hasKeyword(m, k, "static")}
			switch {
			case m == ctor:
				mname, fi.prologue = "<init>", initFields
			case l.hasKeyword(m, k, "get"):
				mname = getterPrefix + mname
			case l.hasKeyword(m, k, "set"):
				mname = setterPrefix + mname
			}
			fi.name, fi.qname = mname, qname+"."+mname
			top := fc.module && len(fc.scopes) == 1
			fn := l.function(m, fi, fc, top)
			fn.Annotations = append(anns, l.decorators(m)...)
			cls.Methods = append(cls.Methods, fn)
		case "field_definition", "public_field_definition":
			if !l.hasKeyword(m, fieldName(m), "static") || m.Child("value") == nil {
				continue
			}
			fname := l.propertyKeyName(fieldName(m))
			v := unwrap(m.Child("value"))
			var val ir.Value
			if isFunctionNode(v) {
				val = fc.closure(v, fname)
			} else {
				val = fc.expr(v)
			}
			fc.b.StoreGlobal(qname+"."+fname, val, pos(m))
		case "class_static_block":
			fc.block(m.Child("body"))
		}
	}
	return qname
}

// fieldName is the name node of a class field.
func fieldName(m *syntax.Node) *syntax.Node {
	if k := m.Child("property"); k != nil {
		return k
	}
	return m.Child("name")
}

// heritage resolves the superclass and implemented interfaces.
func (fc *fnCtx) heritage(h *syntax.Node) []string {
	var out []string
	add := func(n *syntax.Node) {
		if t := fc.superName(n); t != "" {
			out = append(out, t)
		}
	}
	for _, c := range h.Children {
		switch c.Type {
		case "extends_clause":
			for _, v := range c.ChildrenByField("value") {
				add(v)
			}
		case "implements_clause", "extends_type_clause":
			for _, t := range c.NamedChildren() {
				add(t)
			}
		default:
			if c.Named && !isComment(c) {
				add(c)
			}
		}
	}
	return out
}

// superName resolves a superclass expression or type.
func (fc *fnCtx) superName(n *syntax.Node) string {
	n = unwrap(n)
	if n == nil {
		return ""
	}
	switch n.Type {
	case "type_identifier", "nested_type_identifier", "generic_type":
		return fc.l.typeOf(n)
	}
	if st := fc.staticOf(n); st.kind != stNone && st.kind != stGlobalObj {
		return st.qual
	}
	if n.Type == "call_expression" { // mixins: extends Mixin(Base)
		return ""
	}
	return fc.l.text(n)
}

// interfaceDecl records a TypeScript interface as an interface class.
func (fc *fnCtx) interfaceDecl(n *syntax.Node) {
	name := n.Child("name")
	if name == nil {
		return
	}
	cls := &ir.Class{Name: fc.l.text(name), QName: fc.classQName(fc.l.text(name)), Interface: true, File: fc.l.file, Pos: pos(n)}
	for _, c := range n.Children {
		if c.Type == "extends_type_clause" {
			for _, t := range c.NamedChildren() {
				if s := fc.superName(t); s != "" {
					cls.Super = append(cls.Super, s)
				}
			}
		}
	}
	if body := n.Child("body"); body != nil {
		for _, m := range body.Children {
			if m.Type == "property_signature" {
				if k := m.Child("name"); k != nil {
					cls.Fields = append(cls.Fields, ir.Field{Name: fc.l.propertyKeyName(k), Type: fc.l.typeOf(m.Child("type")), Pos: pos(m)})
				}
			}
		}
	}
	fc.l.file.Classes = append(fc.l.file.Classes, cls)
}

// enumDecl lowers a TypeScript enum: a class whose members are static
// fields stored by the module code (numbers count up from the last value).
func (fc *fnCtx) enumDecl(n *syntax.Node) {
	name := n.Child("name")
	if name == nil {
		return
	}
	q := fc.classQName(fc.l.text(name))
	cls := &ir.Class{Name: fc.l.text(name), QName: q, File: fc.l.file, Pos: pos(n)}
	fc.l.file.Classes = append(fc.l.file.Classes, cls)
	body := n.Child("body")
	if body == nil {
		return
	}
	next := int64(0)
	for _, m := range body.Children {
		var key *syntax.Node
		var val ir.Value
		switch {
		case m.Type == "enum_assignment":
			key = m.Child("name")
			val = fc.expr(m.Child("value"))
			if val.IsConst() && val.Const.Kind == ir.ConstInt {
				next = val.Const.Int + 1
			}
		case m.Field == "name" || m.Type == "property_identifier":
			key = m
			val = ir.C(ir.Int(next))
			next++
		default:
			continue
		}
		if key == nil {
			continue
		}
		k := fc.l.propertyKeyName(key)
		cls.Fields = append(cls.Fields, ir.Field{Name: k, Static: true, Pos: pos(m)})
		fc.b.StoreGlobal(q+"."+k, val, pos(m))
	}
}

// namespaceDecl lowers a TypeScript namespace: its statements run with the
// enclosing code; its functions are named "<namespace>.<name>".
func (fc *fnCtx) namespaceDecl(n *syntax.Node) {
	name := n.Child("name")
	body := n.Child("body")
	if name == nil || body == nil || name.Type != "identifier" {
		return
	}
	q := fc.classQName(fc.l.text(name))
	fc.push()
	for _, s := range body.Children {
		d := s
		if d.Type == "export_statement" {
			if decl := d.Child("declaration"); decl != nil {
				d = decl
			}
		}
		if d.Type == "function_declaration" || d.Type == "generator_function_declaration" {
			if fnName := d.Child("name"); fnName != nil {
				fc.l.function(d, funcInfo{name: fc.l.text(fnName), qname: q + "." + fc.l.text(fnName)}, fc, fc.module && len(fc.scopes) == 2)
				continue
			}
		}
		if d.Named && !isComment(d) {
			fc.stmt(d)
		}
	}
	fc.pop()
}
