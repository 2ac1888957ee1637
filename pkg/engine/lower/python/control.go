package python

import (
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// tryStmt: the blocks of the try body list every except clause as a catch
// entry; the else clause follows the body; the finally clause follows both
// the normal exit and every handler.
func (l *lowerer) tryStmt(s *scope, n *syntax.Node) {
	b := s.b
	var excepts []*syntax.Node
	var elseNode, finallyNode, body *syntax.Node
	for _, c := range n.Children {
		switch c.Type {
		case "except_clause", "except_group_clause":
			excepts = append(excepts, c)
		case "else_clause":
			elseNode = c.Child("body")
		case "finally_clause":
			finallyNode = c.FirstOfType("block")
		case "block":
			if c.Field == "body" {
				body = c
			}
		}
	}
	handlers := make([]int, len(excepts))
	for i := range excepts {
		handlers[i] = b.NewBlock()
	}
	exit := b.NewBlock()
	after := exit
	if finallyNode != nil {
		after = b.NewBlock()
	}
	if len(handlers) > 0 {
		b.PushHandlers(handlers, pos(n))
	}
	if body != nil {
		l.stmts(s, body.Children)
	}
	if len(handlers) > 0 {
		b.PopHandlers(pos(n))
	}
	if elseNode != nil {
		l.stmts(s, elseNode.Children)
	}
	if b.Reachable() {
		b.Jump(after, pos(n))
	}
	for i, ex := range excepts {
		b.SetBlock(handlers[i])
		types, alias := l.exceptTypes(s, ex)
		dst := b.Temp(firstType(types))
		b.Catch(dst, types, pos(ex))
		if alias != nil {
			s.assignName(l.text(alias), ir.V(dst), pos(alias))
			if v, ok := s.vars[l.text(alias)]; ok {
				dst = v
			}
		}
		s.excs = append(s.excs, dst)
		if blk := ex.FirstOfType("block"); blk != nil {
			l.stmts(s, blk.Children)
		}
		s.excs = s.excs[:len(s.excs)-1]
		if b.Reachable() {
			b.Jump(after, endPos(ex))
		}
	}
	if finallyNode != nil {
		b.SetBlock(after)
		l.stmts(s, finallyNode.Children)
		if b.Reachable() {
			b.Jump(exit, endPos(n))
		}
	}
	b.SetBlock(exit)
}

func firstType(types string) string {
	if i := strings.IndexByte(types, '|'); i >= 0 {
		return types[:i]
	}
	return types
}

// exceptTypes returns the caught types of an except clause joined by "|"
// and the node of the name it binds, if any.
func (l *lowerer) exceptTypes(s *scope, ex *syntax.Node) (string, *syntax.Node) {
	var typeNode, alias *syntax.Node
	for _, c := range named(ex) {
		if c.Type == "block" {
			break
		}
		if c.Type == "as_pattern" {
			if cs := named(c); len(cs) > 0 {
				typeNode = cs[0]
			}
			if a := c.Child("alias"); a != nil {
				alias = a.FirstOfType("identifier")
			}
			break
		}
		if typeNode == nil {
			typeNode = c
		} else if alias == nil && c.Type == "identifier" { // Python 2: except E, e
			alias = c
		}
	}
	if typeNode == nil {
		return "", alias
	}
	var names []string
	add := func(e *syntax.Node) {
		if t := l.classRef(s, e); t != "" {
			names = append(names, t)
		}
	}
	if typeNode.Type == "tuple" || typeNode.Type == "parenthesized_expression" {
		for _, c := range named(typeNode) {
			add(c)
		}
	} else {
		add(typeNode)
	}
	return strings.Join(names, "|"), alias
}

// withStmt: `with E as v` evaluates E and binds v to E.__enter__().
func (l *lowerer) withStmt(s *scope, n *syntax.Node) {
	b := s.b
	for _, clause := range n.Children {
		if clause.Type != "with_clause" {
			continue
		}
		var items []*syntax.Node
		var collect func(*syntax.Node)
		collect = func(x *syntax.Node) {
			for _, c := range named(x) {
				if c.Type == "with_item" {
					items = append(items, c)
				} else if c.Type == "parenthesized_expression" || c.Type == "tuple" {
					collect(c)
				}
			}
		}
		collect(clause)
		for _, it := range items {
			v := it.Child("value")
			if v == nil {
				continue
			}
			var target *syntax.Node
			if v.Type == "as_pattern" {
				if a := v.Child("alias"); a != nil {
					target = a
				}
				for _, c := range named(v) {
					if c.Field == "" {
						v = c
						break
					}
				}
			}
			cm := l.expr(s, v)
			ent := b.Call(&ir.Call{Kind: ir.CallMethod, Name: "__enter__", Recv: cm}, valueType(b.Fn, cm), pos(v))
			if target != nil {
				l.assignTarget(s, target, ent, pos(target), "")
			}
		}
	}
	if body := n.Child("body"); body != nil {
		l.stmts(s, body.Children)
	}
}

// matchStmt lowers match/case into a chain of tests on the subject: literal
// and value patterns are equality branches, `_` and capture patterns always
// match, and structural patterns bind their captures from the subject's
// elements and fields and branch on an unknown condition.
func (l *lowerer) matchStmt(s *scope, n *syntax.Node) {
	b := s.b
	subj := l.expr(s, n.Child("subject"))
	exit := b.NewBlock()
	var cases []*syntax.Node
	if body := n.Child("body"); body != nil {
		cases = body.ChildrenByField("alternative")
		if len(cases) == 0 {
			for _, c := range body.Children {
				if c.Type == "case_clause" {
					cases = append(cases, c)
				}
			}
		}
	}
	for _, cc := range cases {
		var pats []*syntax.Node
		for _, c := range cc.Children {
			if c.Type == "case_pattern" && c.Field == "" {
				pats = append(pats, c)
			}
		}
		guard, cons := cc.Child("guard"), cc.Child("consequence")
		next, bodyB := b.NewBlock(), b.NewBlock()
		succ := bodyB
		if guard != nil {
			succ = b.NewBlock()
		}
		switch len(pats) {
		case 0:
			b.Jump(succ, pos(cc))
		case 1:
			l.pattern(s, subj, pats[0], succ, next)
		default: // case a, b: a sequence pattern without brackets
			l.structural(s, subj, pats, succ, next, pos(cc))
		}
		if guard != nil {
			b.SetBlock(succ)
			g := ir.C(ir.Bool(true))
			if gs := named(guard); len(gs) > 0 {
				g = l.expr(s, gs[0])
			}
			b.If(g, bodyB, next, pos(guard))
		}
		b.SetBlock(bodyB)
		if cons != nil {
			l.stmts(s, cons.Children)
		}
		if b.Reachable() {
			b.Jump(exit, endPos(cc))
		}
		b.SetBlock(next)
	}
	b.Jump(exit, endPos(n))
	b.SetBlock(exit)
}

// pattern emits the test of one case pattern: it ends the current block
// with a branch to succ or fail.
func (l *lowerer) pattern(s *scope, subj ir.Value, p *syntax.Node, succ, fail int) {
	b := s.b
	if p.Type == "case_pattern" {
		inner := named(p)
		if len(inner) == 0 { // `_`
			b.Jump(succ, pos(p))
			return
		}
		if len(inner) == 1 {
			lit := inner[0]
			if strings.HasPrefix(l.text(p), "-") && (lit.Type == "integer" || lit.Type == "float") {
				v := l.expr(s, lit)
				if v.IsConst() {
					v = negate(v)
				}
				l.eqBranch(s, subj, v, succ, fail, pos(p))
				return
			}
			l.pattern(s, subj, lit, succ, fail)
			return
		}
		l.structural(s, subj, inner, succ, fail, pos(p))
		return
	}
	switch p.Type {
	case "string", "concatenated_string", "integer", "float", "true", "false", "none":
		l.eqBranch(s, subj, l.expr(s, p), succ, fail, pos(p))
	case "dotted_name":
		ids := named(p)
		if len(ids) == 1 { // capture
			s.assignName(l.text(ids[0]), subj, pos(p))
			b.Jump(succ, pos(p))
			return
		}
		v := l.nameValue(s, l.text(ids[0]), pos(ids[0]))
		for _, id := range ids[1:] {
			v = b.LoadField(v, l.text(id), "", pos(id))
		}
		l.eqBranch(s, subj, v, succ, fail, pos(p))
	case "union_pattern":
		alts := named(p)
		for i, a := range alts {
			if i == len(alts)-1 {
				l.pattern(s, subj, a, succ, fail)
				break
			}
			next := b.NewBlock()
			l.pattern(s, subj, a, succ, next)
			b.SetBlock(next)
		}
	case "as_pattern":
		cs := named(p)
		if len(cs) >= 2 {
			l.bindCaptures(s, subj, cs[len(cs)-1])
			l.pattern(s, subj, cs[0], succ, fail)
			return
		}
		b.Jump(succ, pos(p))
	default:
		l.structural(s, subj, []*syntax.Node{p}, succ, fail, pos(p))
	}
}

func negate(v ir.Value) ir.Value {
	switch v.Const.Kind {
	case ir.ConstInt:
		return ir.C(ir.Int(-v.Const.Int))
	case ir.ConstFloat:
		return ir.C(ir.Float(-v.Const.Float))
	}
	return v
}

func (l *lowerer) eqBranch(s *scope, subj, v ir.Value, succ, fail int, p ir.Pos) {
	c := s.b.Binary("==", subj, v, p)
	s.b.If(c, succ, fail, p)
}

// structural binds the captures of class, sequence and mapping patterns and
// branches on an unknown condition.
func (l *lowerer) structural(s *scope, subj ir.Value, pats []*syntax.Node, succ, fail int, p ir.Pos) {
	b := s.b
	if len(pats) == 1 {
		l.bindCaptures(s, subj, pats[0])
	} else {
		for i, pt := range pats {
			l.bindCaptures(s, b.LoadIndex(subj, ir.C(ir.Int(int64(i))), "", pos(pt)), pt)
		}
	}
	c := b.Opaque([]ir.Value{subj}, p)
	b.If(c, succ, fail, p)
}

// bindCaptures assigns the names a pattern captures from the parts of v.
func (l *lowerer) bindCaptures(s *scope, v ir.Value, p *syntax.Node) {
	b := s.b
	switch p.Type {
	case "identifier":
		s.assignName(l.text(p), v, pos(p))
	case "case_pattern":
		cs := named(p)
		if len(cs) == 1 {
			l.bindCaptures(s, v, cs[0])
		}
	case "dotted_name":
		if ids := named(p); len(ids) == 1 {
			s.assignName(l.text(ids[0]), v, pos(p))
		}
	case "as_pattern":
		cs := named(p)
		if len(cs) >= 2 {
			l.bindCaptures(s, v, cs[0])
			s.assignName(l.text(cs[len(cs)-1]), v, pos(p))
		}
	case "splat_pattern":
		if id := p.FirstOfType("identifier"); id != nil {
			e := b.LoadIndex(v, ir.None, "", pos(p))
			s.assignName(l.text(id), b.MakeList("list", []ir.Value{e}, pos(p)), pos(p))
		}
	case "list_pattern", "tuple_pattern":
		i, star := 0, false
		for _, c := range named(p) {
			idx := ir.C(ir.Int(int64(i)))
			if star {
				idx = ir.None
			}
			if c.Type == "case_pattern" && c.FirstOfType("splat_pattern") != nil {
				star = true
				l.bindCaptures(s, v, c.FirstOfType("splat_pattern"))
				continue
			}
			if capturesAny(c) {
				l.bindCaptures(s, b.LoadIndex(v, idx, "", pos(c)), c)
			}
			i++
		}
	case "dict_pattern":
		key := ir.None
		for _, c := range p.Children {
			switch {
			case c.Field == "key":
				key = l.expr(s, c)
			case c.Field == "value":
				if capturesAny(c) {
					l.bindCaptures(s, b.LoadIndex(v, key, "", pos(c)), c)
				}
				key = ir.None
			case c.Type == "splat_pattern":
				l.bindCaptures(s, v, c)
			}
		}
	case "class_pattern":
		i := 0
		for _, c := range named(p) {
			if c.Type != "case_pattern" {
				continue
			}
			if kw := c.FirstOfType("keyword_pattern"); kw != nil {
				ks := named(kw)
				if len(ks) == 2 && capturesAny(ks[1]) {
					l.bindCaptures(s, b.LoadField(v, l.text(ks[0]), "", pos(kw)), ks[1])
				}
				continue
			}
			if capturesAny(c) {
				l.bindCaptures(s, b.LoadIndex(v, ir.C(ir.Int(int64(i))), "", pos(c)), c)
			}
			i++
		}
	}
}

// capturesAny reports whether a pattern binds a name.
func capturesAny(p *syntax.Node) bool {
	switch p.Type {
	case "identifier", "splat_pattern", "as_pattern":
		return true
	case "dotted_name":
		return len(named(p)) == 1
	}
	for _, c := range named(p) {
		if c.Type == "dotted_name" && len(named(c)) > 1 {
			continue
		}
		if capturesAny(c) {
			return true
		}
	}
	return false
}
