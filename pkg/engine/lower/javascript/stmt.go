package javascript

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// stmts lowers a statement list.
func (fc *fnCtx) stmts(list []*syntax.Node) {
	for _, n := range list {
		if n.Named && !isComment(n) {
			fc.stmt(n)
		}
	}
}

// block lowers a statement block in a new scope.
func (fc *fnCtx) block(n *syntax.Node) {
	if n == nil {
		return
	}
	if n.Type != "statement_block" {
		fc.push()
		fc.stmt(n)
		fc.pop()
		return
	}
	fc.push()
	fc.predeclare(n.Children)
	fc.hoist(n.Children)
	fc.stmts(n.Children)
	fc.pop()
}

// predeclare binds the let, const and var names of a statement list before
// its first statement, so that closures created earlier (hoisted function
// declarations, callbacks) capture them.
func (fc *fnCtx) predeclare(list []*syntax.Node) {
	if fc.module && len(fc.scopes) == 1 {
		return // module-level names are declared by lowerModule
	}
	for _, n := range list {
		if n.Type == "export_statement" && n.Child("declaration") != nil {
			n = n.Child("declaration")
		}
		if n.Type != "lexical_declaration" && n.Type != "variable_declaration" {
			continue
		}
		for _, d := range n.Children {
			if d.Type != "variable_declarator" {
				continue
			}
			if _, ok := fc.l.requireRef(d.Child("value")); ok {
				continue
			}
			for _, name := range fc.l.patternNames(d.Child("name")) {
				fc.declare(name, "", n.Type == "variable_declaration")
			}
		}
	}
}

func (fc *fnCtx) isHoisted(n *syntax.Node) bool {
	for _, h := range fc.hoisted {
		if h == n {
			return true
		}
	}
	return false
}

// stmt lowers one statement.
func (fc *fnCtx) stmt(n *syntax.Node) {
	l := fc.l
	switch n.Type {
	case "expression_statement":
		if c := firstNamed(n); c != nil {
			fc.exprStmt(c)
		}
	case "lexical_declaration", "variable_declaration":
		fc.declaration(n)
	case "statement_block":
		fc.block(n)
	case "if_statement":
		fc.ifStmt(n)
	case "while_statement":
		fc.whileStmt(n, "")
	case "do_statement":
		fc.doStmt(n, "")
	case "for_statement":
		fc.forStmt(n, "")
	case "for_in_statement":
		fc.forInStmt(n, "")
	case "switch_statement":
		fc.switchStmt(n, "")
	case "try_statement":
		fc.tryStmt(n)
	case "labeled_statement":
		fc.labeled(n)
	case "return_statement":
		v := ir.None
		if c := firstNamed(n); c != nil {
			v = fc.expr(c)
		}
		fc.b.Return(v, pos(n))
	case "throw_statement":
		v := ir.None
		if c := firstNamed(n); c != nil {
			v = fc.expr(c)
		}
		fc.b.Throw(v, pos(n))
	case "break_statement":
		fc.b.Break(fc.labelOf(n), pos(n))
	case "continue_statement":
		fc.b.Continue(fc.labelOf(n), pos(n))
	case "function_declaration", "generator_function_declaration":
		if fc.isHoisted(n) {
			return
		}
		if fc.module && len(fc.scopes) == 1 {
			l.topFunction(n, fc)
			return
		}
		if name := n.Child("name"); name != nil { // a declaration the hoisting did not see (labelled, in a case)
			v := fc.declare(l.text(name), "", true)
			fc.b.Assign(v, fc.closure(n, l.text(name)), pos(n))
		}
	case "class_declaration", "abstract_class_declaration":
		fc.classDecl(n)
	case "interface_declaration":
		fc.interfaceDecl(n)
	case "enum_declaration":
		fc.enumDecl(n)
	case "internal_module", "module":
		fc.namespaceDecl(n)
	case "export_statement":
		if fc.module && len(fc.scopes) == 1 {
			fc.exportStatement(n)
		} else if d := n.Child("declaration"); d != nil {
			fc.stmt(d)
		}
	case "import_statement":
		if !fc.module {
			return
		}
	case "with_statement":
		if obj := n.Child("object"); obj != nil {
			fc.expr(obj)
		}
		fc.block(n.Child("body"))
	case "ambient_declaration", "type_alias_declaration", "empty_statement", "debugger_statement", "import_alias",
		"abstract_method_signature", "function_signature", "comment", "hash_bang_line":
	case "ERROR":
		fc.errorNode(n)
	default:
		if isExpression(n) {
			fc.exprStmt(n)
		}
	}
}

// errorNode lowers what a syntax error left recognisable: its statements
// and expressions.
func (fc *fnCtx) errorNode(n *syntax.Node) {
	for _, c := range n.Children {
		if !c.Named || isComment(c) {
			continue
		}
		switch {
		case isExpression(c):
			fc.exprStmt(c)
		case c.Type != "ERROR" && (c.Type == "expression_statement" || c.Type == "lexical_declaration" || c.Type == "variable_declaration" ||
			c.Type == "if_statement" || c.Type == "return_statement" || c.Type == "statement_block"):
			fc.stmt(c)
		case c.Type == "ERROR":
			fc.errorNode(c)
		}
	}
}

// exprStmt lowers an expression evaluated for its effects.
func (fc *fnCtx) exprStmt(n *syntax.Node) {
	if n.Type == "internal_module" || n.Type == "module" {
		fc.namespaceDecl(n)
		return
	}
	fc.expr(n)
}

func (fc *fnCtx) labelOf(n *syntax.Node) string {
	if lb := n.Child("label"); lb != nil {
		return fc.l.text(lb)
	}
	if lb := n.FirstOfType("statement_identifier"); lb != nil {
		return fc.l.text(lb)
	}
	return ""
}

// topFunction lowers a module-level function declaration.
func (l *lowerer) topFunction(n *syntax.Node, fc *fnCtx) {
	name := n.Child("name")
	if name == nil {
		return
	}
	if ci := l.protoClasses[l.text(name)]; ci != nil {
		l.protoConstructor(n, ci, fc)
		return
	}
	d := l.top[l.text(name)]
	q := l.mod + "." + l.text(name)
	if d != nil && d.kind == topFunc {
		q = d.qname
	}
	l.function(n, funcInfo{name: l.text(name), qname: q}, fc, true)
}

// declaration lowers let/const/var declarations.
func (fc *fnCtx) declaration(n *syntax.Node) {
	l := fc.l
	mode := bindLet
	if n.Type == "variable_declaration" {
		mode = bindVar
	}
	for _, d := range n.Children {
		if d.Type != "variable_declarator" {
			continue
		}
		if fc.module && len(fc.scopes) == 1 {
			if _, ok := l.requireRef(d.Child("value")); ok && l.requireDeclarator(d, func(string, *importRef) {}) {
				continue // bound by collectTop
			}
		} else if l.requireDeclarator(d, fc.bindImport) {
			continue
		}
		name := d.Child("name")
		if name == nil {
			continue
		}
		typ := l.typeOf(d.Child("type"))
		val := d.Child("value")
		var v ir.Value
		switch {
		case val == nil:
			v = ir.C(ir.Null())
		case name.Type == "identifier" && isFunctionNode(unwrap(val)):
			v = fc.closure(unwrap(val), l.text(name))
		case name.Type == "identifier" && unwrap(val).Type == "class":
			v = fc.classValue(unwrap(val), l.text(name), "")
		default:
			v = fc.expr(val)
		}
		if name.Type == "identifier" {
			fc.bindName(l.text(name), typ, v, mode, pos(d))
			continue
		}
		fc.bindPattern(name, v, mode, pos(d))
	}
}

// ifStmt lowers if/else.
func (fc *fnCtx) ifStmt(n *syntax.Node) {
	cond := fc.expr(n.Child("condition"))
	then, join := fc.b.NewBlock(), fc.b.NewBlock()
	els := join
	alt := n.Child("alternative")
	if alt != nil {
		els = fc.b.NewBlock()
	}
	fc.b.If(cond, then, els, pos(n.Child("condition")))
	fc.b.SetBlock(then)
	fc.block(n.Child("consequence"))
	fc.b.Jump(join, pos(n))
	if alt != nil {
		fc.b.SetBlock(els)
		if alt.Type == "else_clause" {
			for _, c := range alt.Children {
				if c.Named && !isComment(c) {
					fc.block(c)
				}
			}
		} else {
			fc.block(alt)
		}
		fc.b.Jump(join, pos(n))
	}
	fc.b.SetBlock(join)
}

func (fc *fnCtx) whileStmt(n *syntax.Node, label string) {
	head, body, exit := fc.b.NewBlock(), fc.b.NewBlock(), fc.b.NewBlock()
	fc.b.Jump(head, pos(n))
	fc.b.SetBlock(head)
	cond := fc.expr(n.Child("condition"))
	fc.b.If(cond, body, exit, pos(n.Child("condition")))
	fc.b.SetBlock(body)
	fc.b.LoopBody(label, exit, head, pos(n), func() { fc.block(n.Child("body")) })
	fc.b.SetBlock(exit)
}

func (fc *fnCtx) doStmt(n *syntax.Node, label string) {
	body, cont, exit := fc.b.NewBlock(), fc.b.NewBlock(), fc.b.NewBlock()
	fc.b.Jump(body, pos(n))
	fc.b.SetBlock(body)
	fc.b.LoopBody(label, exit, cont, pos(n), func() { fc.block(n.Child("body")) })
	fc.b.SetBlock(cont)
	cond := fc.expr(n.Child("condition"))
	fc.b.If(cond, body, exit, pos(n.Child("condition")))
	fc.b.SetBlock(exit)
}

func (fc *fnCtx) forStmt(n *syntax.Node, label string) {
	fc.push()
	defer fc.pop()
	if init := n.Child("initializer"); init != nil {
		fc.stmt(init)
	}
	head, body, update, exit := fc.b.NewBlock(), fc.b.NewBlock(), fc.b.NewBlock(), fc.b.NewBlock()
	fc.b.Jump(head, pos(n))
	fc.b.SetBlock(head)
	c := n.Child("condition")
	switch {
	case c == nil:
	case c.Type == "expression_statement":
		c = firstNamed(c)
	case c.Type == "empty_statement" || !c.Named:
		c = nil
	}
	if c != nil {
		cond := fc.expr(c)
		fc.b.If(cond, body, exit, pos(c))
	} else {
		fc.b.Jump(body, pos(n))
	}
	fc.b.SetBlock(body)
	fc.b.LoopBody(label, exit, update, pos(n), func() { fc.block(n.Child("body")) })
	fc.b.SetBlock(update)
	for _, inc := range n.ChildrenByField("increment") {
		fc.expr(inc)
	}
	fc.b.Jump(head, pos(n))
	fc.b.SetBlock(exit)
}

// forInStmt lowers for-of (elements: OpLoadIndex with no index) and for-in
// (keys: an opaque value computed from the object).
func (fc *fnCtx) forInStmt(n *syntax.Node, label string) {
	fc.push()
	defer fc.pop()
	coll := fc.expr(n.Child("right"))
	of := true
	if op := n.Child("operator"); op != nil && fc.l.text(op) == "in" {
		of = false
	}
	head, body, exit := fc.b.NewBlock(), fc.b.NewBlock(), fc.b.NewBlock()
	fc.b.Jump(head, pos(n))
	fc.b.SetBlock(head)
	fc.b.If(ir.None, body, exit, pos(n))
	fc.b.SetBlock(body)
	var elem ir.Value
	if of {
		elem = fc.b.LoadIndex(coll, ir.None, "", pos(n.Child("left")))
	} else {
		elem = fc.b.Opaque([]ir.Value{coll}, pos(n.Child("left")))
	}
	mode := bindAssign
	if k := n.Child("kind"); k != nil {
		mode = bindLet
		if fc.l.text(k) == "var" {
			mode = bindVar
		}
	}
	if left := n.Child("left"); left != nil {
		if left.Type == "identifier" && mode != bindAssign {
			fc.bindName(fc.l.text(left), "", elem, mode, pos(left))
		} else {
			fc.bindPattern(left, elem, mode, pos(left))
		}
	}
	fc.b.LoopBody(label, exit, head, pos(n), func() { fc.block(n.Child("body")) })
	fc.b.SetBlock(exit)
}

// switchStmt lowers a switch into a chain of === branches; bodies follow
// one another so that a case without break falls through.
func (fc *fnCtx) switchStmt(n *syntax.Node, label string) {
	subject := fc.expr(n.Child("value"))
	body := n.Child("body")
	var cases []*syntax.Node
	if body != nil {
		for _, c := range body.Children {
			if c.Type == "switch_case" || c.Type == "switch_default" {
				cases = append(cases, c)
			}
		}
	}
	exit := fc.b.NewBlock()
	bodies := make([]int, len(cases))
	for i := range cases {
		bodies[i] = fc.b.NewBlock()
	}
	deflt := exit
	for i, c := range cases {
		if c.Type == "switch_default" {
			deflt = bodies[i]
			continue
		}
		v := fc.expr(c.Child("value"))
		eq := fc.b.Binary("===", subject, v, pos(c.Child("value")))
		next := fc.b.NewBlock()
		fc.b.If(eq, bodies[i], next, pos(c))
		fc.b.SetBlock(next)
	}
	fc.b.Jump(deflt, pos(n))
	fc.push()
	fc.b.PushLoop(label, exit, -1)
	for i, c := range cases {
		fc.b.SetBlock(bodies[i])
		fc.hoist(c.ChildrenByField("body"))
		fc.stmts(c.ChildrenByField("body"))
		next := exit
		if i+1 < len(cases) {
			next = bodies[i+1]
		}
		fc.b.Jump(next, pos(c))
	}
	fc.b.PopLoop()
	fc.pop()
	fc.b.SetBlock(exit)
}

// tryStmt lowers try/catch/finally: the try body's blocks list the catch
// entry as handler; the finally body runs after the normal and the catch
// exits, and, for a try without catch, on a rethrowing handler path.
func (fc *fnCtx) tryStmt(n *syntax.Node) {
	handler := n.Child("handler")
	finalizer := n.Child("finalizer")
	var finBody *syntax.Node
	if finalizer != nil {
		finBody = finalizer.Child("body")
	}
	catch := fc.b.NewBlock()
	join := fc.b.NewBlock()
	fc.b.PushHandlers([]int{catch}, pos(n))
	fc.block(n.Child("body"))
	fc.b.PopHandlers(pos(n))
	fc.b.Jump(join, pos(n))
	fc.b.SetBlock(catch)
	if handler != nil {
		fc.push()
		exc := fc.b.Temp("")
		fc.b.Catch(exc, "", pos(handler))
		if p := handler.Child("parameter"); p != nil {
			if p.Type == "identifier" {
				fc.bindName(fc.l.text(p), fc.l.typeOf(handler.Child("type")), ir.V(exc), bindLet, pos(p))
			} else {
				fc.bindPattern(p, ir.V(exc), bindLet, pos(p))
			}
		}
		fc.block(handler.Child("body"))
		fc.pop()
		fc.b.Jump(join, pos(handler))
	} else {
		exc := fc.b.Temp("")
		fc.b.Catch(exc, "", pos(finalizer))
		fc.block(finBody)
		fc.b.Throw(ir.V(exc), pos(finalizer))
	}
	fc.b.SetBlock(join)
	if finBody != nil {
		fc.block(finBody)
	}
}

// labeled lowers a labelled statement: loops take the label for break and
// continue; any other statement can be left with break label.
func (fc *fnCtx) labeled(n *syntax.Node) {
	label := fc.labelOf(n)
	body := n.Child("body")
	if body == nil {
		return
	}
	switch body.Type {
	case "while_statement":
		fc.whileStmt(body, label)
	case "do_statement":
		fc.doStmt(body, label)
	case "for_statement":
		fc.forStmt(body, label)
	case "for_in_statement":
		fc.forInStmt(body, label)
	case "switch_statement":
		fc.switchStmt(body, label)
	default:
		fc.b.Labeled(label, pos(n), func() { fc.stmt(body) })
	}
}
