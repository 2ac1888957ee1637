package javascript

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// bindMode says how a pattern binds its names.
type bindMode uint8

const (
	bindLet    bindMode = iota + 1 // let/const/catch/parameters: block scope
	bindVar                        // var: function scope
	bindAssign                     // assignment to existing names
)

// bindName binds or assigns one name.
func (fc *fnCtx) bindName(name, typ string, v ir.Value, mode bindMode, p ir.Pos) {
	if mode == bindAssign {
		fc.storeName(name, v, p)
		return
	}
	if fc.module && (len(fc.scopes) == 1 || mode == bindVar) && fc.l.top[name] != nil {
		id := fc.declare(name, typ, true)
		fc.b.Assign(id, v, p)
		fc.b.StoreGlobal(fc.l.mod+"."+name, ir.V(id), p)
		return
	}
	id := fc.declare(name, typ, mode == bindVar)
	fc.b.Assign(id, v, p)
}

// bindPattern destructures v into a pattern: object patterns read fields
// (constant keys) or indexes (computed keys), array patterns read constant
// indexes, a rest element is the rest of an array (slice) or an opaque copy
// of an object, and defaults apply when the value read is undefined.
func (fc *fnCtx) bindPattern(pat *syntax.Node, v ir.Value, mode bindMode, p ir.Pos) {
	l := fc.l
	pat = unwrap(pat)
	if pat == nil {
		return
	}
	switch pat.Type {
	case "identifier", "shorthand_property_identifier_pattern", "shorthand_property_identifier":
		fc.bindName(l.text(pat), "", v, mode, p)
	case "member_expression", "subscript_expression":
		fc.storeTarget(pat, v, p)
	case "assignment_pattern", "object_assignment_pattern":
		fc.bindPattern(pat.Child("left"), fc.withDefault(v, pat.Child("right")), mode, p)
	case "rest_pattern":
		if inner := firstNamed(pat); inner != nil {
			fc.bindPattern(inner, v, mode, p)
		}
	case "object_pattern", "object":
		for _, c := range pat.Children {
			if !c.Named || isComment(c) {
				continue
			}
			cp := pos(c)
			switch c.Type {
			case "shorthand_property_identifier_pattern", "shorthand_property_identifier":
				fc.bindName(l.text(c), "", fc.b.LoadField(v, l.text(c), "", cp), mode, cp)
			case "pair_pattern", "pair":
				key, val := c.Child("key"), c.Child("value")
				if key == nil || val == nil {
					continue
				}
				fc.bindPattern(val, fc.loadKey(v, key), mode, cp)
			case "object_assignment_pattern":
				left := c.Child("left")
				if left == nil {
					continue
				}
				var field ir.Value
				if left.Type == "shorthand_property_identifier_pattern" {
					field = fc.b.LoadField(v, l.text(left), "", cp)
				} else {
					field = fc.b.Opaque([]ir.Value{v}, cp)
				}
				fc.bindPattern(left, fc.withDefault(field, c.Child("right")), mode, cp)
			case "rest_pattern":
				if inner := firstNamed(c); inner != nil {
					fc.bindPattern(inner, fc.b.Opaque([]ir.Value{v}, cp), mode, cp)
				}
			}
		}
	case "array_pattern", "array":
		idx := 0
		prevEnd := pat.Start + 1
		for _, c := range pat.Children {
			if !c.Named || isComment(c) {
				continue
			}
			idx += fc.holes(prevEnd, c.Start)
			prevEnd = c.End
			cp := pos(c)
			if c.Type == "rest_pattern" || c.Type == "spread_element" {
				rest := fc.b.Call(&ir.Call{Kind: ir.CallMethod, Name: "slice", Recv: v, Args: []ir.Value{ir.C(ir.Int(int64(idx)))}}, "Array", cp)
				if inner := firstNamed(c); inner != nil {
					fc.bindPattern(inner, rest, mode, cp)
				}
				continue
			}
			fc.bindPattern(c, fc.b.LoadIndex(v, ir.C(ir.Int(int64(idx))), "", cp), mode, cp)
		}
	}
}

// holes counts the elisions (commas) between two array pattern elements.
func (fc *fnCtx) holes(from, to uint32) int {
	n := 0
	if to > uint32(len(fc.l.src)) || from > to {
		return 0
	}
	for _, c := range fc.l.src[from:to] {
		if c == ',' {
			n++
		}
	}
	return n
}

// loadKey reads the property named by a key node of v: constant keys are
// fields, numbers constant indexes, computed keys indexes.
func (fc *fnCtx) loadKey(v ir.Value, key *syntax.Node) ir.Value {
	p := pos(key)
	if key.Type == "number" {
		return fc.b.LoadIndex(v, ir.C(numberConst(fc.l.text(key))), "", p)
	}
	if name := fc.l.propertyKeyName(key); name != "" {
		return fc.b.LoadField(v, name, "", p)
	}
	if key.Type == "computed_property_name" {
		if inner := firstNamed(key); inner != nil {
			return fc.index(v, fc.expr(inner), p)
		}
	}
	return fc.b.LoadIndex(v, ir.None, "", p)
}

// withDefault applies a default value: a literal default carries no data
// and is dropped; any other default is evaluated on the branch where v is
// undefined.
func (fc *fnCtx) withDefault(v ir.Value, def *syntax.Node) ir.Value {
	if def == nil || isLiteral(unwrap(def)) {
		return v
	}
	p := pos(def)
	return fc.orElse(v, def, p, func(then, join int) {
		undef := fc.b.Binary("===", v, ir.C(ir.Null()), p)
		fc.b.If(undef, then, join, p)
	})
}

// isLiteral reports whether n is a literal without operands.
func isLiteral(n *syntax.Node) bool {
	if n == nil {
		return true
	}
	switch n.Type {
	case "number", "string", "true", "false", "null", "undefined", "regex":
		return true
	case "template_string":
		for _, c := range n.Children {
			if c.Type == "template_substitution" {
				return false
			}
		}
		return true
	case "array", "object":
		return len(n.NamedChildren()) == 0
	}
	return false
}
