package java

import (
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/ir"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/syntax"
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
	type binding struct {
		name, typ string
	}
	patterns := make([][]binding, len(groups))
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
			for _, cv := range vals {
				var test ir.Value
				switch cv.Type {
				case "pattern", "type_pattern", "record_pattern":
					tp := cv
					if tp.Type == "pattern" {
						tp = firstNamed(tp)
					}
					typ := ""
					if tp != nil && tp.Type == "type_pattern" {
						for _, c := range tp.Children {
							if c.Named && c.Type != "identifier" && typ == "" {
								typ = fc.l.typeOf(c, fc.cls)
							}
							if c.Type == "identifier" {
								patterns[i] = append(patterns[i], binding{name: fc.l.text(c), typ: typ})
							}
						}
					}
					test = b.Binary("instanceof", subj, ir.C(ir.Str(typ)), pos(cv))
				case "guard":
					continue
				default:
					test = b.Binary("==", subj, fc.caseValue(cv, subjType), pos(cv))
				}
				next := b.NewBlock()
				b.If(test, bodies[i], next, pos(cv))
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
		for _, pb := range patterns[i] {
			x := fc.declare(pb.name, pb.typ)
			b.Assign(x, b.Cast(pb.typ, subj, pos(g)), pos(g))
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
