package javascript

import (
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// typeOf resolves a TypeScript type (annotation) to the qualified name of
// the class or interface it names: classes and interfaces of the file,
// imported types ("express.Request"), or global types as written
// ("HTMLElement"). `string` is "String" like string literals, arrays are
// "Array", `T | null | undefined` is T, generics are erased; other types
// give "".
func (l *lowerer) typeOf(n *syntax.Node) string {
	if n == nil {
		return ""
	}
	switch n.Type {
	case "type_annotation", "parenthesized_type", "opting_type_annotation", "omitting_type_annotation", "asserts_annotation":
		return l.typeOf(firstNamed(n))
	case "type_identifier", "identifier":
		name := l.text(n)
		if imp := l.imports[name]; imp != nil {
			return imp.qual
		}
		if d := l.top[name]; d != nil && d.kind == topClass {
			return d.qname
		}
		return name
	case "nested_type_identifier", "member_expression", "nested_identifier":
		mod, name := n.Child("module"), n.Child("name")
		if mod == nil {
			mod, name = n.Child("object"), n.Child("property")
		}
		if mod == nil || name == nil {
			return ""
		}
		base := l.typeOf(mod)
		if base == "" {
			return ""
		}
		return base + "." + l.text(name)
	case "generic_type":
		return l.typeOf(n.Child("name"))
	case "array_type", "tuple_type", "readonly_type":
		return "Array"
	case "predefined_type":
		if l.text(n) == "string" {
			return "String"
		}
		return ""
	case "union_type":
		t := ""
		for _, c := range n.NamedChildren() {
			if c.Type == "literal_type" || c.Type == "predefined_type" && l.text(c) != "string" {
				continue
			}
			ct := l.typeOf(c)
			if ct == "" || t != "" && t != ct {
				return ""
			}
			t = ct
		}
		return t
	}
	return ""
}
