package python

import (
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// assignName binds a name: a local variable in a function (a captured one
// when declared nonlocal), a global when declared global, and at module
// level the module's variable followed by OpStoreGlobal "<module>.<name>".
func (s *scope) assignName(name string, v ir.Value, p ir.Pos) {
	b := s.b
	typ := valueType(b.Fn, v)
	switch {
	case s.comp[name] > 0:
		id := s.vars[name]
		b.Assign(id, v, p)
	case s.module:
		id := s.local(name)
		b.Assign(id, v, p)
		s.setType(id, typ)
		b.StoreGlobal(s.l.qual(name), ir.V(id), p)
	case s.global[name]:
		b.StoreGlobal(s.l.qual(name), v, p)
	case s.nonlocal[name]:
		id, ok := s.vars[name]
		if !ok {
			id = b.Captured(name, "")
			s.vars[name] = id
		}
		b.Assign(id, v, p)
	default:
		id := s.local(name)
		b.Assign(id, v, p)
		s.setType(id, typ)
	}
}

// setType keeps the evident type of a variable only while every value
// assigned to it has that type: a Python name may be rebound to a value of
// another type, and a wrong receiver type would hide library models.
// Annotated variables keep their declared type.
func (s *scope) setType(id ir.VarID, typ string) {
	if s.declared[id] {
		return
	}
	if s.assigned == nil {
		s.assigned = map[ir.VarID]string{}
	}
	prev, seen := s.assigned[id]
	switch {
	case !seen:
		s.assigned[id] = typ
		s.b.Fn.Vars[id].Type = typ
	case prev != typ:
		s.assigned[id] = conflictType
		s.b.Fn.Vars[id].Type = ""
	}
}

// declare gives a variable its annotated type for good.
func (s *scope) declare(id ir.VarID, typ string) {
	if typ == "" {
		return
	}
	if s.declared == nil {
		s.declared = map[ir.VarID]bool{}
	}
	s.declared[id] = true
	s.b.Fn.Vars[id].Type = typ
}

// conflictType marks a variable assigned values of different types.
const conflictType = "\x00"

// assign lowers `left = right` (chained and annotated forms included) and
// returns the assigned value.
func (l *lowerer) assign(s *scope, e *syntax.Node) ir.Value {
	left, right := e.Child("left"), e.Child("right")
	annType := ""
	if t := e.Child("type"); t != nil {
		annType = l.typeName(t)
	}
	if right == nil { // x: int
		if left != nil && left.Type == "identifier" && annType != "" && !s.module {
			s.declare(s.local(l.text(left)), annType)
		}
		return ir.None
	}
	var v ir.Value
	switch {
	case right.Type == "assignment":
		v = l.assign(s, right)
	case isSeqTarget(left) && isSeqValue(right) && len(named(left)) == len(named(right)) &&
		!hasSplat(left) && !hasSplat(right):
		// a, b = x, y: element-wise
		ts, rs := named(left), named(right)
		vals := make([]ir.Value, len(rs))
		for i, r := range rs {
			vals[i] = l.expr(s, r)
		}
		for i, t := range ts {
			l.assignTarget(s, t, vals[i], pos(e), "")
		}
		return s.b.MakeList("tuple", vals, pos(right))
	default:
		v = l.expr(s, right)
	}
	l.assignTarget(s, left, v, pos(e), annType)
	return v
}

func isSeqTarget(n *syntax.Node) bool {
	switch n.Type {
	case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "expression_list":
		return true
	}
	return false
}

func isSeqValue(n *syntax.Node) bool {
	switch n.Type {
	case "expression_list", "tuple", "list":
		return true
	}
	return false
}

func hasSplat(n *syntax.Node) bool {
	for _, c := range n.Children {
		if c.Type == "list_splat_pattern" || c.Type == "list_splat" {
			return true
		}
	}
	return false
}

// assignTarget stores v into an assignment target.
func (l *lowerer) assignTarget(s *scope, t *syntax.Node, v ir.Value, p ir.Pos, annType string) {
	b := s.b
	switch t.Type {
	case "identifier":
		name := l.text(t)
		if annType != "" && !s.global[name] {
			s.declare(s.local(name), annType)
		}
		s.assignName(name, v, p)
	case "attribute":
		obj, attr := t.Child("object"), l.text(t.Child("attribute"))
		if path := l.staticPath(s, obj); path != "" {
			b.StoreGlobal(path+"."+attr, v, p)
			return
		}
		ov := l.expr(s, obj)
		b.StoreField(ov, attr, v, p)
		if s.cls != nil && ov.IsVar() && ov.Var == b.Fn.This {
			typ := annType
			if typ == "" {
				typ = valueType(b.Fn, v)
			}
			addField(s.cls, ir.Field{Name: attr, Type: typ, Pos: pos(t)})
		}
	case "subscript":
		obj := l.expr(s, t.Child("value"))
		if subs := t.ChildrenByField("subscript"); len(subs) == 1 && subs[0].Type == "slice" {
			sl := l.slice(s, subs[0])
			b.Call(&ir.Call{Kind: ir.CallMethod, Name: "__setitem__", Recv: obj, Args: []ir.Value{sl, v}}, "", p)
			return
		}
		b.StoreIndex(obj, l.index(s, t), v, p)
	case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "expression_list":
		l.unpack(s, t, v, p)
	case "parenthesized_expression", "as_pattern_target":
		for _, c := range named(t) {
			l.assignTarget(s, c, v, p, annType)
			break
		}
	case "list_splat_pattern", "list_splat":
		for _, c := range named(t) {
			e := b.LoadIndex(v, ir.None, "", p)
			l.assignTarget(s, c, b.MakeList("list", []ir.Value{e}, p), p, "")
			break
		}
	}
}

// unpack assigns the elements of v to the targets of a sequence pattern:
// targets before a starred one read their index, the starred one a list of
// some elements, the ones after it some element.
func (l *lowerer) unpack(s *scope, t *syntax.Node, v ir.Value, p ir.Pos) {
	b := s.b
	star := false
	for i, c := range named(t) {
		if c.Type == "list_splat_pattern" || c.Type == "list_splat" {
			star = true
			l.assignTarget(s, c, v, p, "")
			continue
		}
		idx := ir.C(ir.Int(int64(i)))
		if star {
			idx = ir.None
		}
		e := b.LoadIndex(v, idx, elemType(b.Fn, v), pos(c))
		l.assignTarget(s, c, e, p, "")
	}
}

// augAssign lowers `x op= y` as a load, a binary operation and a store.
func (l *lowerer) augAssign(s *scope, e *syntax.Node) {
	b := s.b
	left, right := e.Child("left"), e.Child("right")
	op := strings.TrimSuffix(l.text(e.Child("operator")), "=")
	if left == nil || right == nil {
		return
	}
	p := pos(e)
	switch left.Type {
	case "attribute":
		obj := l.expr(s, left.Child("object"))
		attr := l.text(left.Child("attribute"))
		cur := b.LoadField(obj, attr, "", pos(left))
		r := l.expr(s, right)
		b.StoreField(obj, attr, l.binop(s, op, cur, r, p), p)
	case "subscript":
		obj := l.expr(s, left.Child("value"))
		idx := l.index(s, left)
		cur := b.LoadIndex(obj, idx, "", pos(left))
		r := l.expr(s, right)
		b.StoreIndex(obj, idx, l.binop(s, op, cur, r, p), p)
	default:
		cur := l.expr(s, left)
		r := l.expr(s, right)
		l.assignTarget(s, left, l.binop(s, op, cur, r, p), p, "")
	}
}
