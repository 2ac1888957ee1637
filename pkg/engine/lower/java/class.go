package java

import (
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// classCtx is a class being lowered.
type classCtx struct {
	cls    *ir.Class
	outer  *classCtx
	encl   *fnCtx            // enclosing function of a local or anonymous class
	nested map[string]string // member classes: simple name -> FQN
	fields map[string]fieldInfo
	inner  bool // has an enclosing instance (inner, local or anonymous class in an instance context)
	// tparams maps the class's type parameters to their erasure.
	tparams map[string]string
}

type fieldInfo struct {
	typ    string
	static bool
}

// classDecl lowers a class, interface, enum, record or annotation type
// declaration.
func (l *lowerer) classDecl(n *syntax.Node, outer *classCtx, encl *fnCtx) *classCtx {
	name := l.text(n.Child("name"))
	q := l.qualify("", name)
	if outer != nil {
		q = outer.cls.QName + "." + name
	}
	if encl != nil {
		if _, ok := l.fileTypes[name]; !ok {
			l.fileTypes[name] = q
		}
	}
	mods := n.FirstOfType("modifiers")
	cc := l.newClass(name, q, outer, encl, n)
	cc.tparams = l.typeParams(n.Child("type_parameters"), cc, nil)
	cc.inner = outer != nil && !hasModifier(l.text(mods), "static") && n.Type == "class_declaration"
	if encl != nil {
		cc.inner = !encl.static
	}
	c := cc.cls
	c.Annotations = l.annotations(mods, cc)
	switch n.Type {
	case "interface_declaration", "annotation_type_declaration":
		c.Interface = true
	case "enum_declaration":
		c.Super = append(c.Super, "java.lang.Enum")
	case "record_declaration":
		c.Super = append(c.Super, "java.lang.Record")
	}
	if s := n.Child("superclass"); s != nil {
		for _, t := range s.Children {
			if t.Named {
				c.Super = append(c.Super, l.typeOf(t, cc))
			}
		}
	}
	for _, field := range []string{"interfaces", ""} {
		for _, s := range n.Children {
			if (field != "" && s.Field == field) || (field == "" && s.Type == "extends_interfaces") {
				for _, tl := range s.Children {
					for _, t := range tl.Children {
						if t.Named {
							c.Super = append(c.Super, l.typeOf(t, cc))
						}
					}
				}
			}
		}
	}
	l.classBody(cc, n, n.Child("body"))
	return cc
}

// newClass registers an ir.Class.
func (l *lowerer) newClass(name, q string, outer *classCtx, encl *fnCtx, n *syntax.Node) *classCtx {
	c := &ir.Class{Name: name, QName: q, File: l.file, Pos: pos(n)}
	if outer != nil {
		c.Outer = outer.cls
	}
	l.file.Classes = append(l.file.Classes, c)
	cc := &classCtx{cls: c, outer: outer, encl: encl, nested: map[string]string{}, fields: map[string]fieldInfo{}}
	l.classes[q] = cc
	return cc
}

// classBody lowers the members of a class body. decl is the declaration
// (for record components); body may be nil.
func (l *lowerer) classBody(cc *classCtx, decl, body *syntax.Node) {
	c := cc.cls
	members := bodyMembers(body)
	for _, m := range members {
		if isTypeDecl(m.Type) {
			cc.nested[l.text(m.Child("name"))] = c.QName + "." + l.text(m.Child("name"))
		}
	}
	// Fields first, so that methods see fields declared after them.
	var records []*syntax.Node
	if decl != nil && decl.Type == "record_declaration" {
		for _, p := range decl.Child("parameters").NamedChildren() {
			if p.Type == "formal_parameter" {
				records = append(records, p)
				l.addField(cc, l.text(p.Child("name")), l.typeOf(p.Child("type"), cc), false, p)
			}
		}
	}
	var enumConsts []*syntax.Node
	if body != nil && body.Type == "enum_body" {
		for _, ec := range body.Children {
			if ec.Type == "enum_constant" {
				enumConsts = append(enumConsts, ec)
				l.addField(cc, l.text(ec.Child("name")), c.QName, true, ec)
			}
		}
	}
	isInterface := c.Interface
	for _, m := range members {
		switch m.Type {
		case "field_declaration", "constant_declaration":
			static := isInterface || hasModifier(l.text(m.FirstOfType("modifiers")), "static")
			typ := l.typeOf(m.Child("type"), cc)
			for _, d := range m.ChildrenByField("declarator") {
				l.addField(cc, l.text(d.Child("name")), typ+dims(l.text(d.Child("dimensions"))), static, d)
			}
		}
	}
	// Initializer code in source order.
	var inits, clinit []*syntax.Node
	var ctors []*syntax.Node
	for _, m := range members {
		switch m.Type {
		case "field_declaration", "constant_declaration":
			static := isInterface || hasModifier(l.text(m.FirstOfType("modifiers")), "static")
			for _, d := range m.ChildrenByField("declarator") {
				if d.Child("value") == nil {
					continue
				}
				if static {
					clinit = append(clinit, d)
				} else {
					inits = append(inits, d)
				}
			}
		case "static_initializer":
			clinit = append(clinit, m.FirstOfType("block"))
		case "block":
			inits = append(inits, m)
		case "constructor_declaration", "compact_constructor_declaration":
			ctors = append(ctors, m)
		}
	}
	if len(enumConsts) > 0 || len(clinit) > 0 {
		fc := l.newFunc(cc, "<clinit>", true, nil, body)
		for _, ec := range enumConsts {
			l.enumConstant(fc, cc, ec)
		}
		for _, in := range clinit {
			fc.initializer(in)
		}
		fc.finish(body)
	}
	for _, m := range members {
		switch m.Type {
		case "method_declaration", "annotation_type_element_declaration":
			l.method(cc, m)
		case "constructor_declaration", "compact_constructor_declaration":
			l.constructor(cc, m, inits, records)
		case "class_declaration", "interface_declaration", "enum_declaration", "record_declaration", "annotation_type_declaration":
			l.classDecl(m, cc, nil)
		}
	}
	if len(ctors) == 0 && (len(inits) > 0 || len(records) > 0) && !isInterface {
		l.constructor(cc, nil, inits, records)
	}
	if len(records) > 0 {
		l.recordAccessors(cc, decl, records, members)
	}
}

// bodyMembers returns the member declarations of a class, interface, enum
// or annotation body.
func bodyMembers(body *syntax.Node) []*syntax.Node {
	if body == nil {
		return nil
	}
	if body.Type != "enum_body" {
		return body.Children
	}
	var out []*syntax.Node
	for _, c := range body.Children {
		if c.Type == "enum_body_declarations" {
			out = append(out, c.Children...)
		}
	}
	return out
}

func (l *lowerer) addField(cc *classCtx, name, typ string, static bool, n *syntax.Node) {
	if name == "" {
		return
	}
	cc.fields[name] = fieldInfo{typ: typ, static: static}
	cc.cls.Fields = append(cc.cls.Fields, ir.Field{Name: name, Type: typ, Static: static, Pos: pos(n)})
}

// hasModifier reports whether a modifiers text holds the keyword.
func hasModifier(mods, kw string) bool {
	for _, f := range strings.Fields(mods) {
		if f == kw {
			return true
		}
	}
	return false
}

// annotations reads the annotations of a modifiers node.
func (l *lowerer) annotations(mods *syntax.Node, cc *classCtx) []ir.Annotation {
	if mods == nil {
		return nil
	}
	var out []ir.Annotation
	for _, a := range mods.Children {
		if a.Type != "annotation" && a.Type != "marker_annotation" {
			continue
		}
		ann := ir.Annotation{Name: l.typeOf(a.Child("name"), cc), Pos: pos(a)}
		if args := a.Child("arguments"); args != nil {
			ann.Args = map[string]string{}
			i := 0
			for _, e := range args.NamedChildren() {
				if e.Type == "element_value_pair" {
					ann.Args[l.text(e.Child("key"))] = l.annotationValue(e.Child("value"))
					continue
				}
				key := "value"
				if i > 0 {
					key = strconv.Itoa(i)
				}
				ann.Args[key] = l.annotationValue(e)
				i++
			}
		}
		out = append(out, ann)
	}
	return out
}

// annotationValue renders a constant annotation element: strings unquoted,
// other values as written.
func (l *lowerer) annotationValue(n *syntax.Node) string {
	if n == nil {
		return ""
	}
	if n.Type == "string_literal" {
		return l.stringLit(n)
	}
	return l.text(n)
}

// newFunc starts a method-like function of class cc. params may be nil.
func (l *lowerer) newFunc(cc *classCtx, name string, static bool, decl, body *syntax.Node) *fnCtx {
	b := ir.NewBuilder(l.file, name, cc.cls.QName+"."+name)
	fc := &fnCtx{l: l, b: b, cls: cc, scope: map[string]ir.VarID{}, static: static, this: ir.NoVar}
	fn := b.Fn
	fn.Class, fn.Static, fn.Pos = cc.cls, static, pos(decl)
	if decl == nil {
		fn.Pos = pos(body)
	}
	if cc.encl != nil {
		fc.parent = cc.encl
		fn.Parent = cc.encl.b.Fn
	}
	if !static {
		fc.this = b.This("this", cc.cls.QName)
		fc.scope["this"] = fc.this
	}
	cc.cls.Methods = append(cc.cls.Methods, fn)
	l.file.Funcs = append(l.file.Funcs, fn)
	return fc
}

// method lowers a method declaration.
func (l *lowerer) method(cc *classCtx, m *syntax.Node) {
	mods := m.FirstOfType("modifiers")
	static := hasModifier(l.text(mods), "static")
	saved := l.mtparams
	l.mtparams = l.typeParams(m.Child("type_parameters"), cc, saved)
	defer func() { l.mtparams = saved }()
	fc := l.newFunc(cc, l.text(m.Child("name")), static, m, m.Child("body"))
	fn := fc.b.Fn
	fn.Annotations = l.annotations(mods, cc)
	fn.Result = l.typeOf(m.Child("type"), cc) + dims(l.text(m.Child("dimensions")))
	fc.params(m.Child("parameters"))
	body := m.Child("body")
	if body == nil {
		fn.Abstract = true
	} else {
		fc.block(body)
	}
	fc.finish(m)
}

// constructor lowers a constructor (m nil: the implicit one), running the
// instance initializers unless it delegates to this(...), and assigning
// record components in canonical and compact constructors.
func (l *lowerer) constructor(cc *classCtx, m *syntax.Node, inits, records []*syntax.Node) {
	var mods, body *syntax.Node
	if m != nil {
		mods, body = m.FirstOfType("modifiers"), m.Child("body")
	}
	fc := l.newFunc(cc, "<init>", false, m, body)
	fn := fc.b.Fn
	fn.Annotations = l.annotations(mods, cc)
	compact := m != nil && m.Type == "compact_constructor_declaration"
	if m == nil || compact {
		for _, p := range records {
			name := l.text(p.Child("name"))
			v := fc.b.Param(name, l.typeOf(p.Child("type"), cc), nil)
			fc.bind(name, v)
		}
	} else {
		fc.params(m.Child("parameters"))
	}
	stmts := []*syntax.Node(nil)
	if body != nil {
		stmts = body.NamedChildren()
	}
	delegates := false
	if len(stmts) > 0 && stmts[0].Type == "explicit_constructor_invocation" {
		fc.stmt(stmts[0])
		delegates = l.text(stmts[0].Child("constructor")) == "this"
		stmts = stmts[1:]
	}
	if !delegates {
		for _, in := range inits {
			fc.initializer(in)
		}
	}
	for _, s := range stmts {
		fc.stmt(s)
	}
	if (m == nil || compact) && fc.b.Reachable() {
		for _, p := range records {
			name := l.text(p.Child("name"))
			v, _ := fc.lookupLocal(name)
			fc.b.StoreField(ir.V(fc.this), name, ir.V(v), pos(p))
		}
	}
	fc.finish(m)
}

// recordAccessors adds the implicit accessor methods of record components
// the record does not declare itself.
func (l *lowerer) recordAccessors(cc *classCtx, decl *syntax.Node, records, members []*syntax.Node) {
	declared := map[string]bool{}
	for _, m := range members {
		if m.Type == "method_declaration" {
			declared[l.text(m.Child("name"))] = true
		}
	}
	for _, p := range records {
		name := l.text(p.Child("name"))
		if declared[name] {
			continue
		}
		fc := l.newFunc(cc, name, false, p, nil)
		fc.b.Fn.Result = cc.fields[name].typ
		v := fc.b.LoadField(ir.V(fc.this), name, cc.fields[name].typ, pos(p))
		fc.b.Return(v, pos(p))
		fc.finish(p)
	}
}

// enumConstant stores `new Enum(args)` (or its constant-specific class body)
// into the constant's global inside <clinit>.
func (l *lowerer) enumConstant(fc *fnCtx, cc *classCtx, ec *syntax.Node) {
	args := fc.args(ec.Child("arguments"))
	qual := cc.cls.QName
	if body := ec.Child("body"); body != nil {
		qual = l.anonClass(fc, body, cc.cls.QName, ec).cls.QName
	}
	v := fc.b.Call(&ir.Call{Kind: ir.CallNew, Name: "<init>", Qual: qual, Recv: ir.None, Args: args}, cc.cls.QName, pos(ec))
	fc.b.StoreGlobal("java:"+cc.cls.QName+"."+l.text(ec.Child("name")), v, pos(ec))
}

// anonClass lowers an anonymous class body (new T() {...} or an enum
// constant body) declared inside function fc, and emits the closure values
// of its methods in fc.
func (l *lowerer) anonClass(fc *fnCtx, body *syntax.Node, super string, n *syntax.Node) *classCtx {
	l.anon++
	top := fc.cls
	name := strconv.Itoa(l.anon)
	cc := l.newClass(name, top.cls.QName+"$"+name, top, fc, n)
	cc.inner = !fc.static
	if super != "" {
		cc.cls.Super = []string{super}
	}
	first := len(cc.cls.Methods)
	l.classBody(cc, nil, body)
	for _, m := range cc.cls.Methods[first:] {
		fc.b.Closure(m, pos(n))
	}
	return cc
}

// localClass lowers a class declared in a block of fc.
func (fc *fnCtx) localClass(n *syntax.Node) {
	cc := fc.l.classDecl(n, fc.cls, fc)
	for _, m := range cc.cls.Methods {
		fc.b.Closure(m, pos(n))
	}
}

// typeParams maps the type parameters of a declaration to their erasure:
// the first bound, or java.lang.Object. Parameters already in scope (outer)
// stay visible.
func (l *lowerer) typeParams(n *syntax.Node, cc *classCtx, outer map[string]string) map[string]string {
	if n == nil {
		return outer
	}
	out := make(map[string]string, len(outer)+2)
	for k, v := range outer {
		out[k] = v
	}
	for _, tp := range n.Children {
		if tp.Type != "type_parameter" {
			continue
		}
		var name string
		erasure := "java.lang.Object"
		for _, c := range tp.Children {
			switch c.Type {
			case "type_identifier", "identifier":
				if name == "" {
					name = l.text(c)
				}
			case "type_bound":
				if b := firstNamed(c); b != nil {
					if e, ok := out[l.text(b)]; ok { // bounded by another parameter
						erasure = e
					} else {
						erasure = l.typeOf(b, cc)
					}
				}
			}
		}
		if name != "" {
			out[name] = erasure
		}
	}
	return out
}
