package javascript

import (
	"strconv"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// decorator turns a decorator (@Get(':id'), @Injectable, @ns.Route()) into
// an annotation: its name resolved like a reference (an imported decorator
// is "<module>.<name>": "@nestjs/common.Get"), its constant arguments by
// position ("0", "1"…) and, for object literal arguments, by key.
func (l *lowerer) decorator(d *syntax.Node) (ir.Annotation, bool) {
	expr := firstNamed(d)
	if expr == nil {
		return ir.Annotation{}, false
	}
	var args *syntax.Node
	if expr.Type == "call_expression" {
		args = expr.Child("arguments")
		expr = expr.Child("function")
	}
	name := l.decoratorName(expr)
	if name == "" {
		return ir.Annotation{}, false
	}
	a := ir.Annotation{Name: name, Pos: pos(d)}
	if args == nil {
		return a, true
	}
	i := 0
	for _, c := range args.Children {
		if !c.Named || isComment(c) {
			continue
		}
		if s, ok := l.constText(c); ok {
			if a.Args == nil {
				a.Args = map[string]string{}
			}
			a.Args[strconv.Itoa(i)] = s
		}
		if c.Type == "object" {
			for _, p := range c.Children {
				if p.Type != "pair" {
					continue
				}
				if s, ok := l.constText(p.Child("value")); ok {
					if k := l.propertyKeyName(p.Child("key")); k != "" {
						if a.Args == nil {
							a.Args = map[string]string{}
						}
						a.Args[k] = s
					}
				}
			}
		}
		i++
	}
	return a, true
}

// decoratorName resolves the name of a decorator expression.
func (l *lowerer) decoratorName(n *syntax.Node) string {
	n = unwrap(n)
	if n == nil {
		return ""
	}
	switch n.Type {
	case "identifier":
		if imp := l.imports[n.Text(l.src)]; imp != nil {
			return imp.qual
		}
		return l.text(n)
	case "member_expression":
		if base := l.decoratorName(n.Child("object")); base != "" {
			if p := n.Child("property"); p != nil {
				return base + "." + l.text(p)
			}
		}
	}
	return ""
}

// constText returns the text of a constant string, number or boolean.
func (l *lowerer) constText(n *syntax.Node) (string, bool) {
	n = unwrap(n)
	if n == nil {
		return "", false
	}
	if s, ok := l.stringValue(n); ok {
		return s, true
	}
	switch n.Type {
	case "number", "true", "false":
		return l.text(n), true
	}
	return "", false
}

// decorators collects the annotations of the decorator children of n.
func (l *lowerer) decorators(n *syntax.Node) []ir.Annotation {
	var out []ir.Annotation
	for _, c := range n.Children {
		if c.Type == "decorator" {
			if a, ok := l.decorator(c); ok {
				out = append(out, a)
			}
		}
	}
	return out
}
