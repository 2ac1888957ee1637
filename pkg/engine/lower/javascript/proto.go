package javascript

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// Constructor functions with prototype methods (ES5 classes):
//
//	function Repo(db) { this.db = db; }
//	Repo.prototype.find = function (id) { … };
//
// A module-level function whose prototype the module assigns is a class
// "<module>.<Name>": the function is its constructor "<init>", and the
// functions assigned to Name.prototype.m (or listed in an object assigned
// to Name.prototype) are its methods.

// protoTarget recognises `Name.prototype.m` (m != "") and `Name.prototype`
// (m == "") for a name declared by a module-level function.
func (l *lowerer) protoTarget(n *syntax.Node) (name, method string, ok bool) {
	n = unwrap(n)
	if n == nil || n.Type != "member_expression" {
		return "", "", false
	}
	obj, prop := unwrap(n.Child("object")), n.Child("property")
	if obj == nil || prop == nil {
		return "", "", false
	}
	if obj.Type == "identifier" && l.text(prop) == "prototype" {
		return l.text(obj), "", true
	}
	if obj.Type == "member_expression" {
		if o2, p2 := unwrap(obj.Child("object")), obj.Child("property"); o2 != nil && p2 != nil && o2.Type == "identifier" && l.text(p2) == "prototype" {
			return l.text(o2), l.text(prop), true
		}
	}
	return "", "", false
}

// collectProtoClasses turns module-level functions whose prototype is
// assigned into classes; it runs after the module's names are collected.
func (l *lowerer) collectProtoClasses(root *syntax.Node, defaultName string) {
	for _, n := range root.Children {
		if n.Type != "expression_statement" {
			continue
		}
		a := firstNamed(n)
		if a == nil || a.Type != "assignment_expression" {
			continue
		}
		name, _, ok := l.protoTarget(a.Child("left"))
		if !ok {
			continue
		}
		d := l.top[name]
		if d == nil || d.kind != topFunc || l.protoClasses[name] != nil {
			continue
		}
		q := l.mod + "." + name
		if name == defaultName {
			q = l.mod
		}
		cls := &ir.Class{Name: name, QName: q, File: l.file, Pos: pos(n)}
		l.protoClasses[name] = &classInfo{cls: cls}
		l.top[name] = &topDecl{kind: topClass, qname: q}
	}
}

// protoConstructor lowers the constructor function of an ES5 class.
func (l *lowerer) protoConstructor(n *syntax.Node, ci *classInfo, fc *fnCtx) {
	l.file.Classes = append(l.file.Classes, ci.cls)
	fn := l.function(n, funcInfo{name: "<init>", qname: ci.cls.QName + ".<init>", class: ci}, fc, true)
	ci.cls.Methods = append(ci.cls.Methods, fn)
}

// protoAssign lowers `Name.prototype.m = function…` and
// `Name.prototype = {…}` for an ES5 class; it reports false for other
// assignments.
func (fc *fnCtx) protoAssign(left, right *syntax.Node) bool {
	l := fc.l
	name, method, ok := l.protoTarget(left)
	if !ok {
		return false
	}
	ci := l.protoClasses[name]
	if ci == nil {
		return false
	}
	r := unwrap(right)
	if method != "" {
		if !isFunctionNode(r) {
			return false
		}
		fc.protoMethod(ci, method, r)
		return true
	}
	if r == nil || r.Type != "object" {
		return false
	}
	for _, m := range r.Children {
		switch m.Type {
		case "pair":
			if v := unwrap(m.Child("value")); isFunctionNode(v) {
				if key := l.propertyKeyName(m.Child("key")); key != "" {
					fc.protoMethod(ci, key, v)
				}
			}
		case "method_definition":
			if key := l.propertyKeyName(m.Child("name")); key != "" {
				fc.protoMethod(ci, key, m)
			}
		}
	}
	return true
}

func (fc *fnCtx) protoMethod(ci *classInfo, name string, fn *syntax.Node) {
	m := fc.l.function(fn, funcInfo{name: name, qname: ci.cls.QName + "." + name, class: ci}, fc, fc.module && len(fc.scopes) == 1)
	ci.cls.Methods = append(ci.cls.Methods, m)
}
