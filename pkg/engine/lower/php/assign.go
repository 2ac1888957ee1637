package php

import (
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// assign stores v into an assignment target: a variable, an array element,
// a property, a static property, or a list()/[] destructuring pattern.
func (f *fnLowerer) assign(target *syntax.Node, v ir.Value, pos ir.Pos) {
	switch target.Type {
	case "variable_name":
		f.writeVar(varName(target, f.l.src), v, pos)
	case "by_ref", "parenthesized_expression":
		if c := firstNamed(target); c != nil {
			f.assign(c, v, pos)
		}
	case "subscript_expression":
		base, idx := subscriptParts(target)
		if base == nil {
			return
		}
		if g := f.globalsKey(base, idx); g != "" {
			f.b.StoreGlobal(g, v, pos)
			return
		}
		c := f.container(base)
		k := ir.None
		if idx != nil {
			k = f.expr(idx)
		}
		f.b.StoreIndex(c, k, v, pos)
		f.writeBack(base, c, pos)
	case "member_access_expression", "nullsafe_member_access_expression":
		obj := f.exprOrNull(target.Child("object"))
		if name := target.Child("name"); name != nil && name.Type == "name" {
			f.b.StoreField(obj, name.Text(f.l.src), v, pos)
		}
	case "scoped_property_access_expression":
		if g := f.staticProperty(target); g != "" {
			f.b.StoreGlobal(g, v, pos)
		}
	case "list_literal", "array_creation_expression":
		f.destructure(target, v, pos)
	case "dynamic_variable_name":
		f.namedValues(target)
	}
}

// container returns the array an element store goes into. A variable
// written by index before any assignment starts as an empty array; a nested
// element or a property is loaded (and written back by writeBack).
func (f *fnLowerer) container(base *syntax.Node) ir.Value {
	pos := posOf(base)
	switch base.Type {
	case "variable_name":
		name := varName(base, f.l.src)
		if name != "this" && !superglobals[name] && name != "GLOBALS" && !f.assigned[name] &&
			!(f.closure && f.uses[name]) && !f.arrow {
			f.writeVar(name, f.b.MakeList("array", nil, pos), pos)
		}
		return f.readVar(name, pos)
	case "subscript_expression":
		inner, idx := subscriptParts(base)
		if inner == nil {
			return f.b.Opaque(nil, pos)
		}
		if g := f.globalsKey(inner, idx); g != "" {
			return f.b.LoadGlobal(g, "", pos)
		}
		c := f.container(inner)
		k := ir.None
		if idx != nil {
			k = f.expr(idx)
		}
		return f.b.LoadIndex(c, k, "", pos)
	}
	return f.expr(base)
}

// writeBack stores a modified array back where it was loaded from, since
// PHP arrays are values.
func (f *fnLowerer) writeBack(base *syntax.Node, c ir.Value, pos ir.Pos) {
	switch base.Type {
	case "variable_name":
		name := varName(base, f.l.src)
		switch {
		case superglobals[name]:
			f.b.StoreGlobal("$"+name, c, pos)
		case f.init || f.globals[name]:
			f.b.StoreGlobal("$"+name, c, pos)
		}
	case "subscript_expression", "member_access_expression", "nullsafe_member_access_expression",
		"scoped_property_access_expression":
		f.assign(base, c, pos)
	}
}

// destructure lowers list($a, $b) = v and ['k' => $a] = v: each target gets
// the element of v at its key or position. Keys and skipped positions are
// read from the source, since the grammar drops "=>" and empty slots.
func (f *fnLowerer) destructure(pattern *syntax.Node, v ir.Value, pos ir.Pos) {
	src := f.l.src
	var elems []*syntax.Node
	for _, c := range pattern.Children {
		if c.Named && c.Type != "comment" {
			elems = append(elems, c)
		}
	}
	index := int64(0)
	prev := pattern.Start
	for i := 0; i < len(elems); i++ {
		c := elems[i]
		if prev <= c.Start {
			index += int64(strings.Count(string(src[prev:c.Start]), ","))
		}
		key := ir.None
		target := c
		switch {
		case c.Type == "array_element_initializer":
			kv := namedOf(c)
			if len(kv) == 0 {
				prev = c.End
				continue
			}
			target = kv[len(kv)-1]
			if len(kv) == 2 {
				key = f.expr(kv[0])
			}
		case i+1 < len(elems) && strings.Contains(string(src[c.End:elems[i+1].Start]), "=>"):
			key = f.expr(c)
			target = elems[i+1]
			i++
		}
		if key.IsNone() {
			key = ir.C(ir.Int(index))
		}
		prev = target.End
		f.assign(target, f.b.LoadIndex(v, key, "", posOf(target)), pos)
	}
}

func namedOf(n *syntax.Node) []*syntax.Node {
	var out []*syntax.Node
	for _, c := range n.Children {
		if c.Named && c.Type != "comment" {
			out = append(out, c)
		}
	}
	return out
}

// array lowers an array literal: a map when an element has a key (unkeyed
// elements get PHP's next integer key), else a list; spread elements are
// appended.
func (f *fnLowerer) array(n *syntax.Node) ir.Value {
	pos := posOf(n)
	var vals, keys []ir.Value
	var spreads []ir.Value
	keyed := false
	for _, e := range n.Children {
		if e.Type != "array_element_initializer" {
			continue
		}
		kv := namedOf(e)
		switch {
		case len(kv) == 1 && kv[0].Type == "variadic_unpacking":
			spreads = append(spreads, f.expr(kv[0]))
		case len(kv) == 1:
			keys = append(keys, ir.None)
			vals = append(vals, f.expr(kv[0]))
		case len(kv) >= 2:
			keyed = true
			keys = append(keys, f.expr(kv[0]))
			vals = append(vals, f.expr(kv[len(kv)-1]))
		}
	}
	var arr ir.Value
	if keyed {
		next := int64(0)
		kv := make([]ir.Value, 0, 2*len(vals))
		for i, k := range keys {
			if k.IsNone() {
				k = ir.C(ir.Int(next))
				next++
			} else if k.IsConst() && k.Const.Kind == ir.ConstInt && k.Const.Int >= next {
				next = k.Const.Int + 1
			}
			kv = append(kv, k, vals[i])
		}
		arr = f.b.MakeMap("array", kv, pos)
	} else {
		arr = f.b.MakeList("array", vals, pos)
	}
	for _, s := range spreads {
		f.b.StoreIndex(arr, ir.None, f.b.LoadIndex(s, ir.None, "", pos), pos)
	}
	return arr
}
