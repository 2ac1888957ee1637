package php

import (
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// function lowers a named function declaration. PHP functions are global
// wherever they are declared, so nested ones are lowered as top-level
// functions too.
func (l *lowerer) function(n *syntax.Node) {
	nameNode := n.Child("name")
	if nameNode == nil {
		return
	}
	name := nameNode.Text(l.src)
	// The analysis finds a function as "<namespace>.<name>", like the
	// members of a class "<class>.<name>".
	qname := name
	if l.scope.ns != "" {
		qname = l.scope.ns + "." + name
	}
	f := l.newFunc(name, qname, nil, nil)
	l.file.Funcs = append(l.file.Funcs, f.b.Fn)
	f.signature(n)
	f.b.Fn.Annotations = f.attributes(n.Child("attributes"))
	f.body(n.Child("body"))
	f.finish(posOf(n))
}

// signature declares the parameters and the result type of a function-like
// node, and returns the promoted constructor parameters.
func (f *fnLowerer) signature(n *syntax.Node) []ir.VarID {
	var promoted []ir.VarID
	if ps := n.Child("parameters"); ps != nil {
		for _, p := range ps.Children {
			switch p.Type {
			case "simple_parameter", "variadic_parameter", "property_promotion_parameter":
			default:
				continue
			}
			nameNode := p.Child("name")
			if nameNode == nil {
				continue
			}
			name := varName(nameNode, f.l.src)
			id := f.b.Param(name, f.typeName(p.Child("type")), f.attributes(p.Child("attributes")))
			last := &f.b.Fn.Params[len(f.b.Fn.Params)-1]
			last.Default = p.Child("default_value") != nil
			last.Rest = p.Type == "variadic_parameter"
			f.assigned[name] = true
			if p.Type == "property_promotion_parameter" {
				promoted = append(promoted, id)
			}
		}
	}
	f.b.Fn.Result = f.typeName(n.Child("return_type"))
	return promoted
}

// body lowers a function body (a compound statement, or the expression of
// an arrow function, which is returned).
func (f *fnLowerer) body(n *syntax.Node) {
	if n == nil {
		f.b.Fn.Abstract = true
		return
	}
	if n.Type == "compound_statement" {
		f.stmts(n.Children)
		return
	}
	v := f.expr(n)
	if f.b.Reachable() {
		f.b.Return(v, posOf(n))
	}
}

// varName returns the name of a variable_name node without the dollar.
func varName(n *syntax.Node, src []byte) string {
	if n.Type == "variable_name" {
		if c := n.FirstOfType("name"); c != nil {
			return c.Text(src)
		}
	}
	if n.Type == "by_ref" || n.Type == "reference_modifier" {
		for _, c := range n.NamedChildren() {
			return varName(c, src)
		}
	}
	return strings.TrimPrefix(n.Text(src), "$")
}

// attributes converts PHP 8 attributes to annotations; constant arguments
// are kept by position ("0", "1") or by name.
func (f *fnLowerer) attributes(n *syntax.Node) []ir.Annotation {
	if n == nil {
		return nil
	}
	var out []ir.Annotation
	for _, g := range n.Children {
		if g.Type != "attribute_group" {
			continue
		}
		for _, a := range g.Children {
			if a.Type != "attribute" {
				continue
			}
			var name string
			for _, c := range a.Children {
				if c.Type == "name" || c.Type == "qualified_name" {
					name = f.l.scope.qualify(nameText(c, f.l.src))
					break
				}
			}
			if name == "" {
				continue
			}
			ann := ir.Annotation{Name: name, Pos: posOf(a)}
			if args := a.Child("parameters"); args != nil {
				i := 0
				for _, arg := range args.Children {
					if arg.Type != "argument" {
						continue
					}
					key := strconv.Itoa(i)
					if k := arg.Child("name"); k != nil {
						key = k.Text(f.l.src)
					} else {
						i++
					}
					if c := f.constOf(argValue(arg)); c != nil {
						if ann.Args == nil {
							ann.Args = map[string]string{}
						}
						ann.Args[key] = constText(c)
					}
				}
			}
			out = append(out, ann)
		}
	}
	return out
}

func constText(c *ir.Const) string {
	switch c.Kind {
	case ir.ConstStr:
		return c.Str
	case ir.ConstNull:
		return "null"
	}
	return c.String()
}

// class lowers a class, interface, trait or enum declaration, or the body of
// an anonymous class (name ""), and returns it.
func (l *lowerer) class(n *syntax.Node, outer *fnLowerer) *ir.Class {
	var name string
	if nn := n.Child("name"); nn != nil {
		name = nn.Text(l.src)
	} else {
		l.anon++
		name = "class@anonymous" + strconv.Itoa(l.anon)
	}
	cls := &ir.Class{Name: name, QName: l.scope.inNS(name), File: l.file, Pos: posOf(n), Interface: n.Type == "interface_declaration"}
	l.file.Classes = append(l.file.Classes, cls)
	// A throwaway function lowerer resolves names and attributes in the
	// class's context.
	ctx := l.newFunc("", "", cls, outer)
	ctx.parentClass = ""
	for _, c := range n.Children {
		switch c.Type {
		case "base_clause":
			for _, s := range c.Children {
				if s.Type == "name" || s.Type == "qualified_name" {
					q := l.scope.qualify(nameText(s, l.src))
					if !cls.Interface && ctx.parentClass == "" {
						ctx.parentClass = q
					}
					cls.Super = append(cls.Super, q)
				}
			}
		case "class_interface_clause":
			for _, s := range c.Children {
				if s.Type == "name" || s.Type == "qualified_name" {
					cls.Super = append(cls.Super, l.scope.qualify(nameText(s, l.src)))
				}
			}
		}
	}
	cls.Annotations = ctx.attributes(n.Child("attributes"))
	body := n.Child("body")
	if body == nil {
		body = n.FirstOfType("declaration_list")
	}
	l.members(cls, ctx.parentClass, body, outer)
	return cls
}

// classInit collects what a class declaration initialises outside its
// methods.
type classInit struct {
	statics  []*syntax.Node // const_element and static property_element nodes
	instance []*syntax.Node // property_element nodes of instance properties with a default
	ctor     *syntax.Node
}

// members lowers the members of a class body: trait uses, constants,
// properties and methods.
func (l *lowerer) members(cls *ir.Class, parent string, body *syntax.Node, outer *fnLowerer) {
	if body == nil {
		return
	}
	ctx := l.newFunc("", "", cls, outer)
	ctx.parentClass = parent
	var ci classInit
	var methods []*syntax.Node
	for _, m := range body.Children {
		switch m.Type {
		case "use_declaration":
			for _, s := range m.Children {
				if s.Type == "name" || s.Type == "qualified_name" {
					cls.Super = append(cls.Super, l.scope.qualify(nameText(s, l.src)))
				}
			}
		case "const_declaration":
			for _, e := range m.Children {
				if e.Type == "const_element" {
					ci.statics = append(ci.statics, e)
				}
			}
		case "enum_case":
			if nn := m.Child("name"); nn != nil {
				cls.Fields = append(cls.Fields, ir.Field{Name: nn.Text(l.src), Type: cls.QName, Static: true, Pos: posOf(m)})
			}
		case "property_declaration":
			static := m.FirstOfType("static_modifier") != nil
			typ := ctx.typeName(m.Child("type"))
			for _, e := range m.Children {
				if e.Type != "property_element" {
					continue
				}
				vn := e.FirstOfType("variable_name")
				if vn == nil {
					continue
				}
				cls.Fields = append(cls.Fields, ir.Field{Name: varName(vn, l.src), Type: typ, Static: static, Pos: posOf(e)})
				if e.FirstOfType("property_initializer") == nil {
					continue
				}
				if static {
					ci.statics = append(ci.statics, e)
				} else {
					ci.instance = append(ci.instance, e)
				}
			}
		case "method_declaration":
			if nn := m.Child("name"); nn != nil && strings.EqualFold(nn.Text(l.src), "__construct") {
				ci.ctor = m
			}
			methods = append(methods, m)
		}
	}
	if len(ci.statics) > 0 {
		l.clinit(cls, parent, ci.statics, outer)
	}
	for _, m := range methods {
		if m == ci.ctor {
			l.method(cls, parent, m, ci.instance, outer)
		} else {
			l.method(cls, parent, m, nil, outer)
		}
	}
	// A class without a constructor still initialises its properties; one
	// with a parent inherits the parent's constructor, which must stay the
	// target of `new`, so its defaults are not lowered.
	if ci.ctor == nil && len(ci.instance) > 0 && parent == "" {
		f := l.newFunc("<init>", cls.QName+".<init>", cls, outer)
		l.file.Funcs = append(l.file.Funcs, f.b.Fn)
		f.b.Fn.Class = cls
		f.thisVar = f.b.This("this", cls.QName)
		f.propertyDefaults(ci.instance)
		cls.Methods = append(cls.Methods, f.finish(cls.Pos))
	}
}

// clinit lowers class constants and static property defaults into a static
// initializer storing the globals "Class::NAME" and "Class::$name".
func (l *lowerer) clinit(cls *ir.Class, parent string, elems []*syntax.Node, outer *fnLowerer) {
	f := l.newFunc("<clinit>", cls.QName+".<clinit>", cls, outer)
	f.parentClass = parent
	l.file.Funcs = append(l.file.Funcs, f.b.Fn)
	f.b.Fn.Class, f.b.Fn.Static = cls, true
	for _, e := range elems {
		if e.Type == "const_element" {
			nn := e.FirstOfType("name")
			named := e.NamedChildren()
			if nn == nil || len(named) < 2 {
				continue
			}
			v := f.expr(named[len(named)-1])
			f.b.StoreGlobal(cls.QName+"::"+nn.Text(l.src), v, posOf(e))
			continue
		}
		vn, init := e.FirstOfType("variable_name"), e.FirstOfType("property_initializer")
		if vn == nil || init == nil || len(init.NamedChildren()) == 0 {
			continue
		}
		v := f.expr(init.NamedChildren()[0])
		f.b.StoreGlobal(cls.QName+"::$"+varName(vn, l.src), v, posOf(e))
	}
	cls.Methods = append(cls.Methods, f.finish(posOf(elems[0])))
}

// propertyDefaults stores the default values of instance properties into
// $this.
func (f *fnLowerer) propertyDefaults(elems []*syntax.Node) {
	for _, e := range elems {
		vn, init := e.FirstOfType("variable_name"), e.FirstOfType("property_initializer")
		if vn == nil || init == nil || len(init.NamedChildren()) == 0 {
			continue
		}
		v := f.expr(init.NamedChildren()[0])
		f.b.StoreField(ir.V(f.thisVar), varName(vn, f.l.src), v, posOf(e))
	}
}

// method lowers one method; for the constructor, defaults are the instance
// properties it initialises before its body.
func (l *lowerer) method(cls *ir.Class, parent string, n *syntax.Node, defaults []*syntax.Node, outer *fnLowerer) {
	nn := n.Child("name")
	if nn == nil {
		return
	}
	name := nn.Text(l.src)
	ctor := strings.EqualFold(name, "__construct")
	if ctor {
		name = "<init>"
	}
	f := l.newFunc(name, cls.QName+"."+name, cls, outer)
	f.parentClass = parent
	l.file.Funcs = append(l.file.Funcs, f.b.Fn)
	fn := f.b.Fn
	fn.Class = cls
	fn.Static = n.FirstOfType("static_modifier") != nil
	if !fn.Static {
		f.thisVar = f.b.This("this", cls.QName)
	}
	fn.Annotations = f.attributes(n.Child("attributes"))
	promoted := f.signature(n)
	if ctor && f.thisVar != ir.NoVar {
		f.propertyDefaults(defaults)
		for _, p := range promoted {
			f.b.StoreField(ir.V(f.thisVar), fn.Vars[p].Name, ir.V(p), posOf(n))
			cls.Fields = append(cls.Fields, ir.Field{Name: fn.Vars[p].Name, Type: fn.Vars[p].Type, Pos: posOf(n)})
		}
	}
	body := n.Child("body")
	fn.Abstract = body == nil
	if body != nil {
		f.stmts(body.Children)
	}
	cls.Methods = append(cls.Methods, f.finish(posOf(n)))
}
