package java

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// block lowers a block (or any statement) in its own scope.
func (fc *fnCtx) block(n *syntax.Node) {
	m := fc.mark()
	if n.Type == "block" || n.Type == "constructor_body" {
		for _, s := range n.Children {
			if s.Named {
				fc.stmt(s)
			}
		}
	} else {
		fc.stmt(n)
	}
	fc.release(m)
}

// stmt lowers one statement.
func (fc *fnCtx) stmt(n *syntax.Node) {
	if n == nil {
		return
	}
	b := fc.b
	p := pos(n)
	switch n.Type {
	case "block", "constructor_body":
		fc.block(n)
	case "local_variable_declaration":
		fc.localVars(n)
	case "expression_statement":
		for _, c := range n.Children {
			if c.Named {
				fc.expr(c)
			}
		}
	case "if_statement":
		fc.ifStmt(n)
	case "while_statement":
		fc.whileStmt(n, "")
	case "do_statement":
		fc.doStmt(n, "")
	case "for_statement":
		fc.forStmt(n, "")
	case "enhanced_for_statement":
		fc.forEach(n, "")
	case "labeled_statement":
		fc.labeled(n)
	case "switch_expression", "switch_statement":
		fc.switchExpr(n, "", false)
	case "try_statement", "try_with_resources_statement":
		fc.tryStmt(n)
	case "throw_statement":
		v := fc.expr(firstNamed(n))
		b.Throw(v, p)
	case "return_statement":
		v := ir.None
		if e := firstNamed(n); e != nil {
			v = fc.exprTyped(e, b.Fn.Result)
		}
		b.Return(v, p)
	case "break_statement":
		b.Break(fc.l.text(n.FirstOfType("identifier")), p)
	case "continue_statement":
		b.Continue(fc.l.text(n.FirstOfType("identifier")), p)
	case "yield_statement":
		v := fc.expr(firstNamed(n))
		if k := len(fc.yields); k > 0 {
			y := fc.yields[k-1]
			b.Assign(y.result, v, p)
			b.Jump(y.end, p)
		}
	case "synchronized_statement":
		for _, c := range n.Children {
			if c.Type == "parenthesized_expression" {
				fc.expr(c)
			}
		}
		fc.block(n.Child("body"))
	case "assert_statement":
		fc.assertStmt(n)
	case "explicit_constructor_invocation":
		fc.ctorCall(n)
	case "class_declaration", "interface_declaration", "enum_declaration", "record_declaration":
		fc.localClass(n)
	case "local_class_declaration":
		for _, c := range n.Children {
			if isTypeDecl(c.Type) {
				fc.localClass(c)
			}
		}
	case ";", "empty_statement", "line_comment", "block_comment":
	default:
		// Unknown statement kinds still evaluate their expressions.
		for _, c := range n.Children {
			if c.Named {
				fc.expr(c)
			}
		}
	}
}

func firstNamed(n *syntax.Node) *syntax.Node {
	for _, c := range n.Children {
		if c.Named {
			return c
		}
	}
	return nil
}

// localVars lowers `T a = x, b[] = {…};`.
func (fc *fnCtx) localVars(n *syntax.Node) {
	typ := fc.l.typeOf(n.Child("type"), fc.cls)
	for _, d := range n.ChildrenByField("declarator") {
		fc.declarator(d, typ)
	}
}

// declarator declares one variable and assigns its initializer.
func (fc *fnCtx) declarator(d *syntax.Node, typ string) {
	l := fc.l
	name := l.text(d.Child("name"))
	t := typ
	if t != "" {
		t += dims(l.text(d.Child("dimensions")))
	}
	val := d.Child("value")
	if val == nil {
		fc.declare(name, t)
		return
	}
	v := fc.exprTyped(val, t)
	if t == "" && v.IsVar() {
		t = fc.b.Fn.Vars[v.Var].Type
	}
	if t == "" && v.IsConst() && v.Const.Kind == ir.ConstStr {
		t = "java.lang.String"
	}
	id := fc.declare(name, t)
	fc.b.Assign(id, v, pos(d))
}

// cond lowers a condition into branches to then and els, splitting && and
// || so that each operand is its own branch.
func (fc *fnCtx) cond(n *syntax.Node, then, els int) {
	for n != nil && n.Type == "parenthesized_expression" {
		n = firstNamed(n)
	}
	if n != nil && n.Type == "binary_expression" {
		switch fc.l.text(n.Child("operator")) {
		case "&&":
			mid := fc.b.NewBlock()
			fc.cond(n.Child("left"), mid, els)
			fc.b.SetBlock(mid)
			fc.cond(n.Child("right"), then, els)
			return
		case "||":
			mid := fc.b.NewBlock()
			fc.cond(n.Child("left"), then, mid)
			fc.b.SetBlock(mid)
			fc.cond(n.Child("right"), then, els)
			return
		}
	}
	v := fc.expr(n)
	fc.b.If(v, then, els, pos(n))
}

func (fc *fnCtx) ifStmt(n *syntax.Node) {
	b := fc.b
	then, els, end := b.NewBlock(), b.NewBlock(), b.NewBlock()
	fc.cond(n.Child("condition"), then, els)
	b.SetBlock(then)
	fc.block(n.Child("consequence"))
	if b.Reachable() {
		b.Jump(end, pos(n))
	}
	b.SetBlock(els)
	if alt := n.Child("alternative"); alt != nil {
		fc.block(alt)
	}
	if b.Reachable() {
		b.Jump(end, pos(n))
	}
	b.SetBlock(end)
}

func (fc *fnCtx) labeled(n *syntax.Node) {
	label := fc.l.text(n.FirstOfType("identifier"))
	var body *syntax.Node
	for _, c := range n.Children {
		if c.Named && c.Type != "identifier" {
			body = c
		}
	}
	switch {
	case body == nil:
	case body.Type == "while_statement":
		fc.whileStmt(body, label)
	case body.Type == "do_statement":
		fc.doStmt(body, label)
	case body.Type == "for_statement":
		fc.forStmt(body, label)
	case body.Type == "enhanced_for_statement":
		fc.forEach(body, label)
	case body.Type == "switch_expression" || body.Type == "switch_statement":
		fc.switchExpr(body, label, false)
	default:
		fc.b.Labeled(label, pos(n), func() { fc.stmt(body) })
	}
}

func (fc *fnCtx) whileStmt(n *syntax.Node, label string) {
	b := fc.b
	head, body, end := b.NewBlock(), b.NewBlock(), b.NewBlock()
	b.Jump(head, pos(n))
	b.SetBlock(head)
	fc.cond(n.Child("condition"), body, end)
	b.SetBlock(body)
	b.LoopBody(label, end, head, pos(n), func() { fc.block(n.Child("body")) })
	b.SetBlock(end)
}

func (fc *fnCtx) doStmt(n *syntax.Node, label string) {
	b := fc.b
	body, test, end := b.NewBlock(), b.NewBlock(), b.NewBlock()
	b.Jump(body, pos(n))
	b.SetBlock(body)
	b.LoopBody(label, end, test, pos(n), func() { fc.block(n.Child("body")) })
	b.SetBlock(test)
	fc.cond(n.Child("condition"), body, end)
	b.SetBlock(end)
}

func (fc *fnCtx) forStmt(n *syntax.Node, label string) {
	b := fc.b
	m := fc.mark()
	for _, c := range n.ChildrenByField("init") {
		if c.Type == "local_variable_declaration" {
			fc.localVars(c)
		} else {
			fc.expr(c)
		}
	}
	head, body, update, end := b.NewBlock(), b.NewBlock(), b.NewBlock(), b.NewBlock()
	b.Jump(head, pos(n))
	b.SetBlock(head)
	if c := n.Child("condition"); c != nil {
		fc.cond(c, body, end)
	} else {
		b.Jump(body, pos(n))
	}
	b.SetBlock(body)
	b.LoopBody(label, end, update, pos(n), func() { fc.block(n.Child("body")) })
	b.SetBlock(update)
	for _, u := range n.ChildrenByField("update") {
		fc.expr(u)
	}
	b.Jump(head, pos(n))
	b.SetBlock(end)
	fc.release(m)
}

// forEach lowers `for (T x : xs)`: each iteration reads some element with
// OpLoadIndex and no index.
func (fc *fnCtx) forEach(n *syntax.Node, label string) {
	b := fc.b
	l := fc.l
	m := fc.mark()
	coll := fc.expr(n.Child("value"))
	typ := l.typeOf(n.Child("type"), fc.cls) + dims(l.text(n.Child("dimensions")))
	if typ == "" && coll.IsVar() {
		if ct := b.Fn.Vars[coll.Var].Type; len(ct) > 2 && ct[len(ct)-2:] == "[]" {
			typ = ct[:len(ct)-2]
		}
	}
	head, body, end := b.NewBlock(), b.NewBlock(), b.NewBlock()
	b.Jump(head, pos(n))
	b.SetBlock(head)
	more := b.Opaque(nil, pos(n))
	b.If(more, body, end, pos(n))
	b.SetBlock(body)
	name := n.Child("name")
	x := fc.declare(l.text(name), typ)
	el := b.LoadIndex(coll, ir.None, typ, pos(name))
	b.Assign(x, el, pos(name))
	b.LoopBody(label, end, head, pos(n), func() { fc.block(n.Child("body")) })
	b.SetBlock(end)
	fc.release(m)
}

func (fc *fnCtx) assertStmt(n *syntax.Node) {
	b := fc.b
	parts := n.NamedChildren()
	if len(parts) == 0 {
		return
	}
	ok, fail := b.NewBlock(), b.NewBlock()
	fc.cond(parts[0], ok, fail)
	b.SetBlock(fail)
	var msg []ir.Value
	if len(parts) > 1 {
		msg = append(msg, fc.expr(parts[1]))
	}
	e := b.Call(&ir.Call{Kind: ir.CallNew, Name: "<init>", Qual: "java.lang.AssertionError", Recv: ir.None, Args: msg}, "java.lang.AssertionError", pos(n))
	b.Throw(e, pos(n))
	b.SetBlock(ok)
}

// ctorCall lowers this(...) and super(...) at the start of a constructor.
func (fc *fnCtx) ctorCall(n *syntax.Node) {
	args := fc.args(n.Child("arguments"))
	kind := ir.CallSuper
	if fc.l.text(n.Child("constructor")) == "this" {
		kind = ir.CallFunc
	}
	c := &ir.Call{Kind: kind, Name: "<init>", Recv: ir.None, Args: args}
	fc.b.Emit(ir.Instr{Op: ir.OpCall, Dst: ir.NoVar, Call: c, Pos: pos(n)})
}

// tryStmt lowers try/catch/finally and try-with-resources. The body's
// blocks list the catch entries (and, with a finally clause, a catch-all
// entry that runs the finally code and rethrows); the finally code also
// follows the normal and catch exits. A return, break or continue inside
// the try leaves without running the finally code.
func (fc *fnCtx) tryStmt(n *syntax.Node) {
	b := fc.b
	l := fc.l
	p := pos(n)
	var catches []*syntax.Node
	var fin *syntax.Node
	for _, c := range n.Children {
		switch c.Type {
		case "catch_clause":
			catches = append(catches, c)
		case "finally_clause":
			fin = c.FirstOfType("block")
		}
	}
	entries := make([]int, 0, len(catches)+1)
	for range catches {
		entries = append(entries, b.NewBlock())
	}
	all := -1
	if fin != nil {
		all = b.NewBlock()
		entries = append(entries, all)
	}
	after := b.NewBlock()
	m := fc.mark()
	fc.pushHandlers(entries, p)
	if res := n.Child("resources"); res != nil {
		for _, r := range res.NamedChildren() {
			fc.resource(r)
		}
	}
	fc.block(n.Child("body"))
	fc.popHandlers(p)
	fc.release(m)
	if b.Reachable() {
		b.Jump(after, p)
	}
	if fin != nil {
		fc.pushHandlers([]int{all}, p)
		for i := range catches {
			b.Fn.Blocks[entries[i]].Handlers = fc.handlers[len(fc.handlers)-1]
		}
	}
	for i, c := range catches {
		b.SetBlock(entries[i])
		m := fc.mark()
		param := c.FirstOfType("catch_formal_parameter")
		types := ""
		if ct := param.FirstOfType("catch_type"); ct != nil {
			for _, t := range ct.NamedChildren() {
				if types != "" {
					types += "|"
				}
				types += l.typeOf(t, fc.cls)
			}
		}
		first := types
		if i := indexByte(types, '|'); i >= 0 {
			first = "java.lang.Throwable"
		}
		ex := fc.declare(l.text(param.Child("name")), first)
		b.Catch(ex, types, pos(param))
		fc.block(c.Child("body"))
		fc.release(m)
		if b.Reachable() {
			b.Jump(after, pos(c))
		}
	}
	if fin != nil {
		fc.popHandlers(p)
		b.SetBlock(all)
		ex := b.Temp("java.lang.Throwable")
		b.Catch(ex, "java.lang.Throwable", pos(fin))
		fc.block(fin)
		if b.Reachable() {
			b.Throw(ir.V(ex), pos(fin))
		}
	}
	b.SetBlock(after)
	if fin != nil {
		fc.block(fin)
	}
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// resource declares a try-with-resources variable (or evaluates a resource
// expression).
func (fc *fnCtx) resource(r *syntax.Node) {
	if r.Child("name") == nil {
		fc.expr(firstNamed(r))
		return
	}
	fc.declarator(r, fc.l.typeOf(r.Child("type"), fc.cls))
}
