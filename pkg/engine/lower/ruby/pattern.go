package ruby

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// literalPattern lists the node types a when/in clause compares with ==.
var literalPattern = map[string]bool{
	"integer": true, "float": true, "string": true, "simple_symbol": true, "delimited_symbol": true,
	"nil": true, "true": true, "false": true, "chained_string": true, "character": true, "identifier": true,
}

// join is where the branches of a case expression meet; when its value
// is wanted, each branch's value is assigned to one temporary.
type join struct {
	b    *ir.Builder
	res  ir.VarID
	exit int
}

func newJoin(b *ir.Builder, want bool) *join {
	j := &join{b: b, res: ir.NoVar}
	if want {
		j.res = b.Temp("")
	}
	j.exit = b.NewBlock()
	return j
}

// arrive ends a branch whose value is v, unless its end is unreachable.
func (j *join) arrive(v ir.Value, at ir.Pos) {
	if j.b.Reachable() {
		if j.res != ir.NoVar {
			j.b.Assign(j.res, v, at)
		}
		j.b.Jump(j.exit, at)
	}
}

// value continues after the join and returns the expression's value.
func (j *join) value() ir.Value {
	j.b.SetBlock(j.exit)
	if j.res == ir.NoVar {
		return ir.C(ir.Null())
	}
	return ir.V(j.res)
}

// arm ends a branch of a case with the value of the statements of body
// (nil: none).
func (fs *fnState) arm(j *join, body *syntax.Node, want bool, at ir.Pos) {
	v := ir.C(ir.Null())
	if body != nil {
		v = fs.body(body.Children, want)
	}
	j.arrive(v, at)
}

// clauses returns the children of a case of type typ, and its else clause.
func clauses(n *syntax.Node, typ string) (out []*syntax.Node, elseN *syntax.Node) {
	for _, c := range n.NamedChildren() {
		switch c.Type {
		case typ:
			out = append(out, c)
		case "else":
			elseN = c
		}
	}
	return out, elseN
}

// caseWhen lowers case/when as a chain of equality branches.
func (fs *fnState) caseWhen(n *syntax.Node, want bool) ir.Value {
	b := fs.b
	p := pos(n)
	var subject ir.Value
	hasSubject := false
	if v := n.Child("value"); v != nil {
		subject, hasSubject = fs.expr(v, true), true
	}
	j := newJoin(b, want)
	whens, elseN := clauses(n, "when")
	for _, w := range whens {
		bodyB := b.NewBlock()
		for _, pat := range w.ChildrenByField("pattern") {
			var cond ir.Value
			pn := pat
			if c := pat.NamedChildren(); pat.Type == "pattern" && len(c) == 1 {
				pn = c[0]
			}
			pv := fs.expr(pn, true)
			switch {
			case !hasSubject:
				cond = pv
			case literalPattern[pn.Type]:
				cond = b.Binary("==", subject, pv, pos(pn))
			default:
				cond = b.Opaque([]ir.Value{subject, pv}, pos(pn))
			}
			next := b.NewBlock()
			b.If(cond, bodyB, next, pos(pat))
			b.SetBlock(next)
		}
		miss := b.Current()
		b.SetBlock(bodyB)
		fs.arm(j, w.Child("body"), want, pos(w))
		b.SetBlock(miss)
	}
	fs.arm(j, elseN, want, p)
	return j.value()
}

// caseIn lowers case/in pattern matching: literal patterns are equality
// tests, structural ones opaque tests that bind their variables.
func (fs *fnState) caseIn(n *syntax.Node, want bool) ir.Value {
	b := fs.b
	p := pos(n)
	subject := fs.exprOrNil(n.Child("value"))
	j := newJoin(b, want)
	ins, elseN := clauses(n, "in_clause")
	for _, c := range ins {
		match, miss := b.NewBlock(), b.NewBlock()
		fs.testPattern(c.Child("pattern"), subject, match, miss)
		b.SetBlock(match)
		if g := c.Child("guard"); g != nil {
			guarded := b.NewBlock()
			cond := fs.exprOrNil(g.Child("condition"))
			if g.Type == "unless_guard" {
				b.If(cond, miss, guarded, pos(g))
			} else {
				b.If(cond, guarded, miss, pos(g))
			}
			b.SetBlock(guarded)
		}
		fs.arm(j, c.Child("body"), want, pos(c))
		b.SetBlock(miss)
	}
	fs.arm(j, elseN, want, p)
	return j.value()
}

// testPattern branches to match or miss; variables are bound on the match
// path.
func (fs *fnState) testPattern(pat *syntax.Node, subject ir.Value, match, miss int) {
	b := fs.b
	if pat == nil {
		b.Jump(match, ir.Pos{})
		return
	}
	p := pos(pat)
	switch pat.Type {
	case "identifier":
		fs.assignTo(pat, subject)
		b.Jump(match, p)
		return
	case "alternative_pattern":
		for _, alt := range pat.ChildrenByField("alternatives") {
			next := b.NewBlock()
			fs.testPattern(alt, subject, match, next)
			b.SetBlock(next)
		}
		b.Jump(miss, p)
		return
	case "as_pattern":
		bind := b.NewBlock()
		fs.testPattern(pat.Child("value"), subject, bind, miss)
		b.SetBlock(bind)
		if nm := pat.Child("name"); nm != nil {
			fs.assignTo(nm, subject)
		}
		b.Jump(match, p)
		return
	case "parenthesized_pattern":
		if c := pat.NamedChildren(); len(c) == 1 {
			fs.testPattern(c[0], subject, match, miss)
			return
		}
	case "variable_reference_pattern", "expression_reference_pattern":
		v := ir.C(ir.Null())
		if c := pat.NamedChildren(); len(c) > 0 {
			v = fs.expr(c[len(c)-1], true)
		}
		b.If(b.Binary("==", subject, v, p), match, miss, p)
		return
	}
	if literalPattern[pat.Type] {
		b.If(b.Binary("==", subject, fs.expr(pat, true), p), match, miss, p)
		return
	}
	var pv []ir.Value
	pv = append(pv, subject)
	if isConstPath(pat) || pat.Type == "range" || pat.Type == "regex" {
		pv = append(pv, fs.expr(pat, true))
	}
	cond := b.Opaque(pv, p)
	bind := b.NewBlock()
	b.If(cond, bind, miss, p)
	b.SetBlock(bind)
	fs.bindPattern(pat, subject)
	b.Jump(match, p)
}

// bindPattern binds the variables of a structural pattern to the parts of
// v they match.
func (fs *fnState) bindPattern(pat *syntax.Node, v ir.Value) {
	b := fs.b
	switch pat.Type {
	case "identifier":
		fs.assignTo(pat, v)
	case "as_pattern":
		fs.bindPattern(pat.Child("value"), v)
		if nm := pat.Child("name"); nm != nil {
			fs.assignTo(nm, v)
		}
	case "array_pattern", "find_pattern":
		i := 0
		for _, c := range pat.NamedChildren() {
			if c.Field == "class" {
				continue
			}
			if c.Type == "splat_parameter" {
				if nm := c.Child("name"); nm != nil {
					fs.assignTo(nm, v)
				}
				i++
				continue
			}
			idx := ir.C(ir.Int(int64(i)))
			if pat.Type == "find_pattern" {
				idx = ir.None
			}
			fs.bindPattern(c, b.LoadIndex(v, idx, "", pos(c)))
			i++
		}
	case "hash_pattern":
		for _, c := range pat.NamedChildren() {
			switch c.Type {
			case "keyword_pattern":
				k := c.Child("key")
				if k == nil {
					continue
				}
				key := fs.hashKey(k)
				e := b.LoadIndex(v, key, "", pos(c))
				if val := c.Child("value"); val != nil {
					fs.bindPattern(val, e)
				} else if key.IsConst() && key.Const.IsStr() {
					b.Assign(b.Var(key.Const.Str, ""), e, pos(c))
				}
			case "hash_splat_parameter":
				if nm := c.Child("name"); nm != nil {
					fs.assignTo(nm, v)
				}
			}
		}
	case "alternative_pattern":
		for _, alt := range pat.ChildrenByField("alternatives") {
			fs.bindPattern(alt, v)
		}
	case "parenthesized_pattern":
		for _, c := range pat.NamedChildren() {
			fs.bindPattern(c, v)
		}
	}
}
