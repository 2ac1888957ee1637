package python

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// stmts lowers a statement list.
func (l *lowerer) stmts(s *scope, ns []*syntax.Node) {
	for _, n := range ns {
		if n.Named {
			l.stmt(s, n)
		}
	}
}

// stmt lowers one statement.
func (l *lowerer) stmt(s *scope, n *syntax.Node) {
	b := s.b
	switch n.Type {
	case "expression_statement":
		for _, e := range named(n) {
			l.exprStmt(s, e)
		}
	case "function_definition":
		l.funcDef(s, n, nil, nil)
	case "class_definition":
		l.classDef(s, n, nil, nil)
	case "decorated_definition":
		def := n.Child("definition")
		switch {
		case def == nil:
		case def.Type == "class_definition":
			l.classDef(s, def, decorators0(n), nil)
		default:
			l.funcDef(s, def, decorators0(n), nil)
		}
	case "if_statement":
		l.ifStmt(s, n)
	case "while_statement":
		l.whileStmt(s, n)
	case "for_statement":
		l.forStmt(s, n)
	case "try_statement":
		l.tryStmt(s, n)
	case "with_statement":
		l.withStmt(s, n)
	case "match_statement":
		l.matchStmt(s, n)
	case "return_statement":
		v := ir.None
		if cs := named(n); len(cs) > 0 {
			v = l.expr(s, cs[0])
		}
		if s.gen != ir.NoVar {
			v = ir.V(s.gen)
		}
		b.Return(v, pos(n))
	case "raise_statement":
		v := ir.None
		for _, c := range named(n) {
			if c.Field != "cause" {
				v = l.expr(s, c)
				break
			}
		}
		if v.IsNone() && len(s.excs) > 0 {
			v = ir.V(s.excs[len(s.excs)-1])
		}
		b.Throw(v, pos(n))
	case "break_statement":
		b.Break("", pos(n))
	case "continue_statement":
		b.Continue("", pos(n))
	case "assert_statement":
		l.assertStmt(s, n)
	case "delete_statement":
		for _, t := range named(n) {
			l.del(s, t)
		}
	case "print_statement":
		var args []ir.Value
		for _, c := range named(n) {
			args = append(args, l.expr(s, c))
		}
		b.Call(&ir.Call{Kind: ir.CallFunc, Recv: ir.None, Name: "print", Args: args}, "", pos(n))
	case "exec_statement":
		var args []ir.Value
		for _, c := range named(n) {
			args = append(args, l.expr(s, c))
		}
		b.Call(&ir.Call{Kind: ir.CallFunc, Recv: ir.None, Name: "exec", Args: args}, "", pos(n))
	case "pass_statement", "global_statement", "nonlocal_statement", "import_statement", "import_from_statement",
		"future_import_statement", "comment", "line_continuation", "type_alias_statement":
	case "block":
		l.stmts(s, n.Children)
	case "ERROR":
		// keep what can be understood of a fragment that did not parse
		for _, c := range named(n) {
			if isStatement(c.Type) {
				l.stmt(s, c)
			} else {
				l.exprStmt(s, c)
			}
		}
	default:
		l.exprStmt(s, n)
	}
}

func isStatement(t string) bool {
	switch t {
	case "expression_statement", "function_definition", "class_definition", "decorated_definition", "if_statement",
		"while_statement", "for_statement", "try_statement", "with_statement", "match_statement", "return_statement",
		"raise_statement", "break_statement", "continue_statement", "assert_statement", "delete_statement",
		"print_statement", "exec_statement", "pass_statement", "global_statement", "nonlocal_statement",
		"import_statement", "import_from_statement", "future_import_statement", "block", "ERROR":
		return true
	}
	return false
}

// exprStmt lowers an expression evaluated for its effects (or an assignment).
func (l *lowerer) exprStmt(s *scope, e *syntax.Node) {
	switch e.Type {
	case "assignment":
		l.assign(s, e)
	case "augmented_assignment":
		l.augAssign(s, e)
	case "string":
		if e.FirstOfType("interpolation") != nil {
			l.expr(s, e)
		}
	case "comment", "line_continuation", "identifier", "integer", "float", "true", "false", "none", "ellipsis":
	default:
		l.expr(s, e)
	}
}

// ifStmt lowers if/elif/else as a chain of two-way branches.
func (l *lowerer) ifStmt(s *scope, n *syntax.Node) {
	b := s.b
	clauses := []*syntax.Node{n}
	var els *syntax.Node
	for _, alt := range n.ChildrenByField("alternative") {
		switch alt.Type {
		case "elif_clause":
			clauses = append(clauses, alt)
		case "else_clause":
			els = alt.Child("body")
		}
	}
	exit := b.NewBlock()
	for _, cl := range clauses {
		cond := cl.Child("condition")
		c := l.expr(s, cond)
		then, next := b.NewBlock(), b.NewBlock()
		b.If(c, then, next, pos(cond))
		b.SetBlock(then)
		if body := cl.Child("consequence"); body != nil {
			l.stmts(s, body.Children)
		}
		if b.Reachable() {
			b.Jump(exit, endPos(cl))
		}
		b.SetBlock(next)
	}
	if els != nil {
		l.stmts(s, els.Children)
	}
	if b.Reachable() {
		b.Jump(exit, endPos(n))
	}
	b.SetBlock(exit)
}

// elseBody returns the block of a loop's or try's else clause.
func elseBody(n *syntax.Node) *syntax.Node {
	for _, c := range n.Children {
		if c.Type == "else_clause" {
			return c.Child("body")
		}
	}
	return nil
}

// whileStmt: the condition is tested at the loop head; the else clause runs
// when it is false, not after a break.
func (l *lowerer) whileStmt(s *scope, n *syntax.Node) {
	b := s.b
	head := b.NewBlock()
	b.Jump(head, pos(n))
	b.SetBlock(head)
	c := l.expr(s, n.Child("condition"))
	body, els, exit := b.NewBlock(), b.NewBlock(), b.NewBlock()
	b.If(c, body, els, pos(n.Child("condition")))
	b.SetBlock(body)
	l.loopBody(s, n, head, els, exit)
}

// loopBody lowers the body of a while or for loop, which continues at head,
// and its else clause, which runs from els when the loop ends without a
// break.
func (l *lowerer) loopBody(s *scope, n *syntax.Node, head, els, exit int) {
	b := s.b
	b.LoopBody("", exit, head, endPos(n), func() {
		if bd := n.Child("body"); bd != nil {
			l.stmts(s, bd.Children)
		}
	})
	b.SetBlock(els)
	if e := elseBody(n); e != nil {
		l.stmts(s, e.Children)
	}
	if b.Reachable() {
		b.Jump(exit, endPos(n))
	}
	b.SetBlock(exit)
}

// forStmt: each iteration reads some element of the iterable (OpLoadIndex
// with no index) into the target. `for i, x in enumerate(xs)` reads the
// elements of xs directly.
func (l *lowerer) forStmt(s *scope, n *syntax.Node) {
	b := s.b
	left, right := n.Child("left"), n.Child("right")
	var counter *syntax.Node
	if inner, idx := l.enumerateArg(s, left, right); inner != nil {
		right, counter, left = inner, idx, named(left)[1]
	}
	it := l.expr(s, right)
	head := b.NewBlock()
	b.Jump(head, pos(n))
	b.SetBlock(head)
	more := b.Opaque([]ir.Value{it}, pos(right))
	body, els, exit := b.NewBlock(), b.NewBlock(), b.NewBlock()
	b.If(more, body, els, pos(right))
	b.SetBlock(body)
	elem := b.LoadIndex(it, ir.None, elemType(s.b.Fn, it), pos(left))
	if counter != nil {
		i := b.Opaque(nil, pos(counter))
		s.b.SetType(i.Var, "int")
		l.assignTarget(s, counter, i, pos(counter), "")
	}
	l.assignTarget(s, left, elem, pos(left), "")
	l.loopBody(s, n, head, els, exit)
}

// enumerateArg recognises `for i, x in enumerate(xs)` (the built-in, not a
// shadowing definition) and returns xs and the counter target.
func (l *lowerer) enumerateArg(s *scope, left, right *syntax.Node) (inner, counter *syntax.Node) {
	if right == nil || right.Type != "call" || left == nil {
		return nil, nil
	}
	if left.Type != "pattern_list" && left.Type != "tuple_pattern" {
		return nil, nil
	}
	targets := named(left)
	fn, args := right.Child("function"), right.Child("arguments")
	if len(targets) != 2 || fn == nil || fn.Type != "identifier" || l.text(fn) != "enumerate" || args == nil {
		return nil, nil
	}
	if s.lookup("enumerate").kind != nkUnknown {
		return nil, nil
	}
	as := named(args)
	if len(as) != 1 || as[0].Type == "keyword_argument" || as[0].Type == "list_splat" {
		return nil, nil
	}
	return as[0], targets[0]
}

// elemType is the type of an element of a value of known type.
func elemType(fn *ir.Func, v ir.Value) string {
	if valueType(fn, v) == "str" {
		return "str"
	}
	return ""
}

// assertStmt: a failed assertion raises its message.
func (l *lowerer) assertStmt(s *scope, n *syntax.Node) {
	b := s.b
	cs := named(n)
	if len(cs) == 0 {
		return
	}
	c := l.expr(s, cs[0])
	ok, fail := b.NewBlock(), b.NewBlock()
	b.If(c, ok, fail, pos(cs[0]))
	b.SetBlock(fail)
	msg := ir.None
	if len(cs) > 1 {
		msg = l.expr(s, cs[1])
	}
	b.Throw(msg, pos(n))
	b.SetBlock(ok)
}

// del: a deleted name holds None, a deleted item is removed with
// __delitem__, a deleted attribute is set to None.
func (l *lowerer) del(s *scope, t *syntax.Node) {
	b := s.b
	switch t.Type {
	case "identifier":
		s.assignName(l.text(t), ir.C(ir.Null()), pos(t))
	case "subscript":
		obj := l.expr(s, t.Child("value"))
		idx := l.index(s, t)
		b.Call(&ir.Call{Kind: ir.CallMethod, Name: "__delitem__", Recv: obj, Args: []ir.Value{idx}}, "", pos(t))
	case "attribute":
		obj := l.expr(s, t.Child("object"))
		b.StoreField(obj, l.text(t.Child("attribute")), ir.C(ir.Null()), pos(t))
	case "expression_list", "tuple", "list", "parenthesized_expression", "pattern_list":
		for _, c := range named(t) {
			l.del(s, c)
		}
	}
}
