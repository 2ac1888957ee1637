package javascript

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// jsx lowers a JSX element. React escapes what it renders, so the element
// is an opaque value computed from nothing; attribute and child
// expressions are evaluated for their effects (and closures). Two things
// stay visible:
//   - dangerouslySetInnerHTML={v} calls el.set:innerHTML(v.__html) on the
//     element, the setter a DOM `el.innerHTML = v` assignment calls;
//   - a component element <Comp a={x}/> calls Comp with the props object,
//     so that props flow into the component function.
func (fc *fnCtx) jsx(n *syntax.Node) ir.Value {
	switch n.Type {
	case "jsx_self_closing_element":
		return fc.jsxElement(n, n, nil)
	case "jsx_element":
		var children []*syntax.Node
		for _, c := range n.Children {
			if c.Field != "open_tag" && c.Field != "close_tag" {
				children = append(children, c)
			}
		}
		return fc.jsxElement(n, n.Child("open_tag"), children)
	}
	// fragment
	el := fc.b.Opaque(nil, pos(n))
	fc.jsxChildren(n.Children)
	return el
}

func (fc *fnCtx) jsxElement(n, tag *syntax.Node, children []*syntax.Node) ir.Value {
	p := pos(n)
	el := fc.b.Opaque(nil, p)
	if tag == nil {
		fc.jsxChildren(children)
		return el
	}
	var kv []ir.Value
	var spreads []ir.Value
	for _, a := range tag.Children {
		switch a.Type {
		case "jsx_attribute":
			named := a.NamedChildren()
			if len(named) == 0 {
				continue
			}
			attr := fc.l.text(named[0])
			val := ir.C(ir.Bool(true))
			if len(named) > 1 {
				val = fc.jsxValue(named[1], attr)
			}
			if attr == "dangerouslySetInnerHTML" {
				html := fc.b.LoadField(val, "__html", "", pos(a))
				fc.b.Call(&ir.Call{Kind: ir.CallMethod, Name: setterPrefix + "innerHTML", Recv: el, Args: []ir.Value{html}}, "", pos(a))
			}
			kv = append(kv, ir.C(ir.Str(attr)), val)
		case "jsx_expression": // {...props}
			if s := firstNamed(a); s != nil {
				if s.Type == "spread_element" {
					spreads = append(spreads, fc.expr(firstNamed(s)))
				} else {
					fc.expr(s)
				}
			}
		}
	}
	fc.jsxChildren(children)
	name := tag.Child("name")
	if name == nil || !isComponent(fc.l.text(name)) {
		return el
	}
	props := fc.b.MakeMap("Object", kv, p)
	for _, s := range spreads {
		fc.b.Call(&ir.Call{Kind: ir.CallStatic, Qual: "Object", Name: "assign", Recv: ir.None, Args: []ir.Value{props, s}}, "Object", p)
	}
	c := &ir.Call{Recv: ir.None, Args: []ir.Value{props}}
	switch name.Type {
	case "identifier":
		fc.callName(c, fc.l.text(name))
	case "member_expression", "nested_identifier":
		obj, prop := name.Child("object"), name.Child("property")
		if obj == nil || prop == nil {
			return el
		}
		fc.methodCall(c, obj, fc.l.text(prop))
	default:
		return el
	}
	fc.b.Call(c, "", p)
	return el
}

// isComponent reports whether a JSX tag names a component (capitalised or
// dotted) rather than an intrinsic element.
func isComponent(name string) bool {
	if name == "" {
		return false
	}
	c := name[0]
	if c >= 'A' && c <= 'Z' {
		return true
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '.' {
			return true
		}
	}
	return false
}

// jsxValue lowers an attribute value.
func (fc *fnCtx) jsxValue(v *syntax.Node, attr string) ir.Value {
	switch v.Type {
	case "string":
		return ir.C(ir.Str(decodeString(fc.l.src, v)))
	case "jsx_expression":
		inner := firstNamed(v)
		if inner == nil {
			return ir.C(ir.Null())
		}
		if isFunctionNode(unwrap(inner)) {
			return fc.closure(unwrap(inner), "")
		}
		return fc.expr(inner)
	}
	return fc.expr(v)
}

// jsxChildren evaluates child expressions and elements; their values are
// escaped when rendered and flow nowhere.
func (fc *fnCtx) jsxChildren(children []*syntax.Node) {
	for _, c := range children {
		switch c.Type {
		case "jsx_expression":
			if inner := firstNamed(c); inner != nil {
				if inner.Type == "spread_element" {
					fc.expr(firstNamed(inner))
				} else {
					fc.expr(inner)
				}
			}
		case "jsx_element", "jsx_self_closing_element", "jsx_fragment":
			fc.jsx(c)
		}
	}
}
