package golang

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// kind is what the lowering needs to know of a type's shape: range loops,
// zero values and append depend on it.
type kind uint8

const (
	kUnknown kind = iota
	kSlice        // slices and arrays
	kMap
	kChan
	kString
	kNumber
	kBool
	kStruct
	kFunc
)

// kindTable holds the known kind of each variable of a function, by VarID.
type kindTable []kind

func (t *kindTable) set(v ir.VarID, k kind) {
	if v < 0 {
		return
	}
	for int(v) >= len(*t) {
		*t = append(*t, kUnknown)
	}
	(*t)[v] = k
}

func (t kindTable) get(v ir.VarID) kind {
	if v < 0 || int(v) >= len(t) {
		return kUnknown
	}
	return t[v]
}

var builtinTypes = map[string]kind{
	"bool": kBool, "string": kString, "error": kUnknown, "any": kUnknown, "comparable": kUnknown,
	"byte": kNumber, "rune": kNumber, "int": kNumber, "int8": kNumber, "int16": kNumber, "int32": kNumber,
	"int64": kNumber, "uint": kNumber, "uint8": kNumber, "uint16": kNumber, "uint32": kNumber, "uint64": kNumber,
	"uintptr": kNumber, "float32": kNumber, "float64": kNumber, "complex64": kNumber, "complex128": kNumber,
}

// typeName renders a type expression as a qualified name (see the package
// comment): pointers, slices and arrays stripped.
func (fc *fileCtx) typeName(n *syntax.Node) string {
	if n == nil {
		return ""
	}
	switch n.Type {
	case "type_identifier", "identifier":
		name := fc.text(n)
		if _, ok := builtinTypes[name]; ok {
			if name == "any" {
				return ""
			}
			return name
		}
		if p := fc.dotImport(name); p != "" {
			return p + "." + name
		}
		return fc.pkg + "." + name
	case "qualified_type", "selector_expression":
		pk, nm := n.Child("package"), n.Child("name")
		if n.Type == "selector_expression" {
			pk, nm = n.Child("operand"), n.Child("field")
		}
		if p := fc.resolveImport(fc.text(pk)); p != "" {
			return p + "." + fc.text(nm)
		}
		return fc.text(pk) + "." + fc.text(nm)
	case "pointer_type", "parenthesized_type", "unary_expression", "parenthesized_expression":
		if c := lastNamed(n); c != nil {
			return fc.typeName(c)
		}
	case "slice_type", "array_type", "implicit_length_array_type":
		return fc.typeName(n.Child("element"))
	case "generic_type":
		return fc.typeName(n.Child("type"))
	case "map_type":
		return "map"
	case "channel_type":
		return "chan"
	case "function_type":
		return "func"
	}
	return ""
}

// typeKind classifies a type expression.
func (fc *fileCtx) typeKind(n *syntax.Node) kind {
	if n == nil {
		return kUnknown
	}
	switch n.Type {
	case "type_identifier", "identifier":
		name := fc.text(n)
		if k, ok := builtinTypes[name]; ok {
			return k
		}
		if ti := fc.types[name]; ti != nil {
			return ti.kind
		}
	case "slice_type", "array_type", "implicit_length_array_type":
		return kSlice
	case "map_type":
		return kMap
	case "channel_type":
		return kChan
	case "function_type":
		return kFunc
	case "struct_type":
		return kStruct
	case "parenthesized_type":
		return fc.typeKind(lastNamed(n))
	case "generic_type":
		return fc.typeKind(n.Child("type"))
	}
	return kUnknown
}

// isTypeExpr reports whether n is syntactically a type (not an expression).
func isTypeExpr(n *syntax.Node) bool {
	switch n.Type {
	case "type_identifier", "qualified_type", "pointer_type", "slice_type", "array_type", "map_type",
		"channel_type", "function_type", "struct_type", "interface_type", "generic_type", "parenthesized_type",
		"implicit_length_array_type":
		return true
	}
	return false
}

func lastNamed(n *syntax.Node) *syntax.Node {
	for i := len(n.Children) - 1; i >= 0; i-- {
		if n.Children[i].Named {
			return n.Children[i]
		}
	}
	return nil
}

// declare collects the file's top-level declarations before any body is
// lowered, so that uses may precede declarations.
func (fc *fileCtx) declare(root *syntax.Node) {
	for _, c := range root.Children {
		switch c.Type {
		case "type_declaration":
			fc.declareTypes(c)
		case "function_declaration":
			fc.funcs[fc.text(c.Child("name"))] = &funcInfo{results: fc.results(c.Child("result"))}
		case "method_declaration":
			if t := receiverTypeName(fc, c.Child("receiver")); t != "" {
				fc.methods[t+"."+fc.text(c.Child("name"))] = &funcInfo{results: fc.results(c.Child("result"))}
			}
		case "const_declaration":
			for _, s := range c.Children {
				if s.Type == "const_spec" {
					fc.declareConst(s)
				}
			}
		case "var_declaration":
			for _, s := range varSpecs(c) {
				typ := fc.typeName(s.Child("type"))
				for _, nm := range s.ChildrenByField("name") {
					fc.globals[fc.text(nm)] = typ
				}
			}
		}
	}
	// Types first (a const may have a declared type), then classes.
	for _, c := range root.Children {
		if c.Type == "type_declaration" {
			fc.declareClasses(c)
		}
	}
}

func varSpecs(decl *syntax.Node) []*syntax.Node {
	var out []*syntax.Node
	for _, c := range decl.Children {
		switch c.Type {
		case "var_spec":
			out = append(out, c)
		case "var_spec_list":
			for _, s := range c.Children {
				if s.Type == "var_spec" {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// declareConst records constants whose value is a literal, to inline them.
func (fc *fileCtx) declareConst(s *syntax.Node) {
	names := s.ChildrenByField("name")
	vals := s.Child("value")
	if vals == nil {
		return
	}
	elems := vals.NamedChildren()
	for i, nm := range names {
		if i < len(elems) {
			if c := fc.literal(elems[i]); c != nil {
				fc.consts[fc.text(nm)] = c
			}
		}
	}
}

func typeSpecs(decl *syntax.Node) []*syntax.Node {
	var out []*syntax.Node
	for _, c := range decl.Children {
		if c.Type == "type_spec" || c.Type == "type_alias" {
			out = append(out, c)
		}
	}
	return out
}

func (fc *fileCtx) declareTypes(decl *syntax.Node) {
	for _, s := range typeSpecs(decl) {
		name := fc.text(s.Child("name"))
		t := s.Child("type")
		ti := &typeInfo{kind: fc.typeKind(t), ftypes: map[string]string{}, fkinds: map[string]kind{}}
		if t != nil && t.Type == "struct_type" {
			for _, fd := range structFields(t) {
				typ := fc.typeName(fd.Child("type"))
				for _, nm := range fd.ChildrenByField("name") {
					n := fc.text(nm)
					ti.fields = append(ti.fields, n)
					ti.ftypes[n] = typ
					ti.fkinds[n] = fc.typeKind(fd.Child("type"))
				}
			}
		}
		fc.types[name] = ti
	}
}

func structFields(st *syntax.Node) []*syntax.Node {
	var out []*syntax.Node
	if fl := st.FirstOfType("field_declaration_list"); fl != nil {
		for _, fd := range fl.Children {
			if fd.Type == "field_declaration" {
				out = append(out, fd)
			}
		}
	}
	return out
}

// declareClasses makes a Class of every named type of a declaration.
func (fc *fileCtx) declareClasses(decl *syntax.Node) {
	for _, s := range typeSpecs(decl) {
		name := fc.text(s.Child("name"))
		t := s.Child("type")
		cls := fc.class(name, pos(s))
		switch {
		case t == nil:
		case t.Type == "struct_type":
			for _, fd := range structFields(t) {
				typ := fc.typeName(fd.Child("type"))
				names := fd.ChildrenByField("name")
				if len(names) == 0 { // embedded: promoted fields and methods
					cls.Super = append(cls.Super, typ)
					cls.Fields = append(cls.Fields, ir.Field{Name: baseName(typ), Type: typ, Pos: pos(fd)})
				}
				for _, nm := range names {
					cls.Fields = append(cls.Fields, ir.Field{Name: fc.text(nm), Type: typ, Pos: pos(nm)})
				}
			}
		case t.Type == "interface_type":
			cls.Interface = true
			for _, m := range t.Children {
				switch m.Type {
				case "method_elem", "method_spec":
					fc.abstractMethod(cls, m)
				case "type_elem", "constraint_elem":
					for _, e := range m.NamedChildren() {
						if typ := fc.typeName(e); typ != "" {
							cls.Super = append(cls.Super, typ)
						}
					}
				case "qualified_type", "type_identifier":
					cls.Super = append(cls.Super, fc.typeName(m))
				}
			}
		default:
			if typ := fc.typeName(t); typ != "" && s.Type == "type_alias" {
				cls.Super = append(cls.Super, typ)
			}
		}
	}
}

// class returns the Class of a type named in this file, creating it (also
// for receivers of types declared in another file of the package).
func (fc *fileCtx) class(name string, p ir.Pos) *ir.Class {
	if c := fc.classes[name]; c != nil {
		return c
	}
	c := &ir.Class{Name: name, QName: fc.pkg + "." + name, File: fc.f, Pos: p}
	fc.classes[name] = c
	fc.f.Classes = append(fc.f.Classes, c)
	return c
}

func (fc *fileCtx) abstractMethod(cls *ir.Class, m *syntax.Node) {
	name := fc.text(m.Child("name"))
	b := ir.NewBuilder(fc.f, name, cls.QName+"."+name)
	fn := b.Fn
	fn.Class, fn.Abstract, fn.Pos = cls, true, pos(m)
	fc.params(b, m.Child("parameters"), nil)
	if rs := fc.results(m.Child("result")); len(rs) > 0 {
		fn.Result = rs[0]
	}
	b.Finish(pos(m))
	cls.Methods = append(cls.Methods, fn)
	fc.f.Funcs = append(fc.f.Funcs, fn)
}

func baseName(q string) string {
	for i := len(q) - 1; i >= 0; i-- {
		if q[i] == '.' || q[i] == '/' {
			return q[i+1:]
		}
	}
	return q
}

// results lists the result types of a signature.
func (fc *fileCtx) results(r *syntax.Node) []string {
	if r == nil {
		return nil
	}
	if r.Type != "parameter_list" {
		return []string{fc.typeName(r)}
	}
	var out []string
	for _, p := range r.Children {
		if p.Type != "parameter_declaration" && p.Type != "variadic_parameter_declaration" {
			continue
		}
		typ := fc.typeName(p.Child("type"))
		n := len(p.ChildrenByField("name"))
		if n == 0 {
			n = 1
		}
		for i := 0; i < n; i++ {
			out = append(out, typ)
		}
	}
	return out
}

// receiverTypeName returns the bare type name of a method receiver.
func receiverTypeName(fc *fileCtx, recv *syntax.Node) string {
	if recv == nil {
		return ""
	}
	for _, p := range recv.Children {
		if p.Type == "parameter_declaration" {
			t := p.Child("type")
			for t != nil && (t.Type == "pointer_type" || t.Type == "parenthesized_type" || t.Type == "generic_type") {
				if t.Type == "generic_type" {
					t = t.Child("type")
				} else {
					t = lastNamed(t)
				}
			}
			if t != nil {
				return fc.text(t)
			}
		}
	}
	return ""
}

// implement records, as a supertype, each interface of the file that a type
// of the file satisfies by its methods declared in the file: Go types
// implement interfaces implicitly, and the analysis dispatches a call
// through an interface to the implementations that list it.
func (fc *fileCtx) implement() {
	var ifaces []*ir.Class
	for _, c := range fc.f.Classes {
		if c.Interface && len(c.Methods) > 0 {
			ifaces = append(ifaces, c)
		}
	}
	if len(ifaces) == 0 {
		return
	}
	for _, c := range fc.f.Classes {
		if c.Interface || len(c.Methods) == 0 {
			continue
		}
		has := make(map[string]bool, len(c.Methods))
		for _, m := range c.Methods {
			has[m.Name] = true
		}
	next:
		for _, it := range ifaces {
			for _, m := range it.Methods {
				if !has[m.Name] {
					continue next
				}
			}
			for _, s := range c.Super {
				if s == it.QName {
					continue next
				}
			}
			c.Super = append(c.Super, it.QName)
		}
	}
}
