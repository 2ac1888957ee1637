package java

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// switchExpr lowers a switch statement or expression into a chain of
// equality branches on the subject. Classic groups fall through to the next
// group's body; arrow rules jump to the end. As an expression (value true)
// the result is a temporary assigned by each rule or yield.
func (fc *fnCtx) switchExpr(n *syntax.Node, label string, value bool) ir.Value {
	b := fc.b
	p := pos(n)
	subj := fc.expr(n.Child("condition"))
	subjType := ""
	if subj.IsVar() {
		subjType = b.Fn.Vars[subj.Var].Type
	}
	var groups []*syntax.Node
	if body := n.Child("body"); body != nil {
		for _, g := range body.Children {
			if g.Type == "switch_block_statement_group" || g.Type == "switch_rule" {
				groups = append(groups, g)
			}
		}
	}
	end := b.NewBlock()
	result := ir.NoVar
	if value {
		result = b.Temp("")
		fc.yields = append(fc.yields, yieldTarget{result: result, end: end})
	}
	bodies := make([]int, len(groups))
	for i := range groups {
		bodies[i] = b.NewBlock()
	}
	bound := make([][]patternVar, len(groups))
	deflt := -1
	for i, g := range groups {
		for _, lab := range g.Children {
			if lab.Type != "switch_label" {
				continue
			}
			vals := lab.NamedChildren()
			if len(vals) == 0 {
				deflt = i
				continue
			}
			var guard *syntax.Node
			for _, cv := range vals {
				if cv.Type == "guard" {
					guard = firstNamed(cv)
				}
			}
			for _, cv := range vals {
				var test ir.Value
				switch cv.Type {
				case "guard":
					continue
				case "pattern", "type_pattern", "record_pattern":
					var vars []patternVar
					test, vars = fc.pattern(cv, subj, vars)
					bound[i] = append(bound[i], vars...)
				case "identifier":
					if fc.l.text(cv) == "default" { // case null, default
						deflt = i
						continue
					}
					test = b.Binary("==", subj, fc.caseValue(cv, subjType), pos(cv))
				default:
					test = b.Binary("==", subj, fc.caseValue(cv, subjType), pos(cv))
				}
				next := b.NewBlock()
				if guard != nil {
					check := b.NewBlock()
					b.If(test, check, next, pos(cv))
					b.SetBlock(check)
					fc.cond(guard, bodies[i], next)
				} else {
					b.If(test, bodies[i], next, pos(cv))
				}
				b.SetBlock(next)
			}
		}
	}
	if deflt >= 0 {
		b.Jump(bodies[deflt], p)
	} else {
		b.Jump(end, p)
	}
	b.PushLoop(label, end, -1)
	m := fc.mark()
	for i, g := range groups {
		b.SetBlock(bodies[i])
		for _, pv := range bound[i] {
			fc.bind(pv.name, pv.v)
		}
		if g.Type == "switch_rule" {
			fc.switchRule(g, result)
			if b.Reachable() {
				b.Jump(end, pos(g))
			}
			continue
		}
		for _, s := range g.Children {
			if s.Named && s.Type != "switch_label" {
				fc.stmt(s)
			}
		}
		if b.Reachable() {
			if i+1 < len(groups) {
				b.Jump(bodies[i+1], pos(g))
			} else {
				b.Jump(end, pos(g))
			}
		}
	}
	fc.release(m)
	b.PopLoop()
	if value {
		fc.yields = fc.yields[:len(fc.yields)-1]
	}
	b.SetBlock(end)
	if value {
		return ir.V(result)
	}
	return ir.None
}

// switchRule lowers the body of `case … -> body`.
func (fc *fnCtx) switchRule(g *syntax.Node, result ir.VarID) {
	for _, s := range g.Children {
		if !s.Named || s.Type == "switch_label" {
			continue
		}
		if s.Type == "expression_statement" && result != ir.NoVar {
			v := fc.expr(firstNamed(s))
			fc.b.Assign(result, v, pos(s))
			continue
		}
		fc.stmt(s)
	}
}

// caseValue lowers a case label: a constant, or an enum constant (a static
// field of the subject's type when known).
func (fc *fnCtx) caseValue(n *syntax.Node, subjType string) ir.Value {
	if n.Type == "identifier" {
		name := fc.l.text(n)
		if _, ok := fc.lookupLocal(name); !ok {
			if subjType != "" && !isPrimitive(subjType) && subjType != "java.lang.String" {
				return fc.b.LoadGlobal("java:"+subjType+"."+name, subjType, pos(n))
			}
			if _, isField := fc.findField(name); !isField {
				return ir.C(ir.Str(name))
			}
		}
	}
	return fc.expr(n)
}

func isPrimitive(t string) bool {
	switch t {
	case "int", "long", "short", "byte", "char", "boolean", "float", "double", "java.lang.Integer", "java.lang.Character":
		return true
	}
	return false
}

// patternVar is a variable a pattern binds.
type patternVar struct {
	name string
	v    ir.VarID
}

// pattern lowers a type or record pattern matched against x: it returns
// the instanceof test and binds the pattern's variables (casts of x, and
// record components read as fields of the record when the file declares
// it), appending them to vars.
func (fc *fnCtx) pattern(n *syntax.Node, x ir.Value, vars []patternVar) (ir.Value, []patternVar) {
	b := fc.b
	l := fc.l
	p := pos(n)
	if n.Type == "pattern" {
		if inner := firstNamed(n); inner != nil {
			return fc.pattern(inner, x, vars)
		}
		return b.Opaque([]ir.Value{x}, p), vars
	}
	var typ string
	var name *syntax.Node
	var body *syntax.Node
	for _, c := range n.Children {
		switch {
		case !c.Named:
		case c.Type == "record_pattern_body":
			body = c
		case c.Type == "identifier" && (n.Type != "record_pattern" || typ != ""):
			name = c
		case typ == "" && c.Type != "modifiers":
			typ = l.typeOf(c, fc.cls)
		}
	}
	test := b.Binary("instanceof", x, ir.C(ir.Str(typ)), p)
	cast := b.Cast(typ, x, p)
	if name != nil {
		id := fc.declare(l.text(name), typ)
		b.Assign(id, cast, pos(name))
		vars = append(vars, patternVar{name: l.text(name), v: id})
	}
	if body == nil {
		return test, vars
	}
	var fields []ir.Field
	if cc := l.classes[typ]; cc != nil {
		fields = cc.cls.Fields
	}
	i := 0
	for _, comp := range body.Children {
		if !comp.Named {
			continue
		}
		var val ir.Value
		if i < len(fields) && !fields[i].Static {
			val = b.LoadField(cast, fields[i].Name, fields[i].Type, pos(comp))
		} else {
			val = b.Opaque([]ir.Value{cast}, pos(comp))
		}
		i++
		if comp.Type == "record_pattern_component" {
			var ctyp string
			var cname *syntax.Node
			for _, c := range comp.Children {
				if c.Type == "identifier" {
					cname = c
				} else if c.Named && ctyp == "" {
					ctyp = l.typeOf(c, fc.cls)
				}
			}
			if cname != nil {
				id := fc.declare(l.text(cname), ctyp)
				b.Assign(id, val, pos(cname))
				vars = append(vars, patternVar{name: l.text(cname), v: id})
			}
			continue
		}
		_, vars = fc.pattern(comp, val, vars)
	}
	return test, vars
}
