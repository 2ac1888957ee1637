package php

import (
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// stmts lowers a statement list.
func (f *fnLowerer) stmts(list []*syntax.Node) {
	for _, s := range list {
		f.stmt(s)
	}
}

// stmt lowers one statement.
func (f *fnLowerer) stmt(n *syntax.Node) {
	echo := f.l.shortEcho
	f.l.shortEcho = false
	pos := posOf(n)
	switch n.Type {
	case "php_tag":
		f.l.shortEcho = f.text(n) == "<?="
	case "text_interpolation":
		// Inline HTML is not lowered; a trailing `<?=` tag echoes the next
		// expression.
		for _, c := range n.Children {
			f.stmt(c)
		}
	case "text", "comment", "empty_statement", "named_label_statement", "goto_statement", "declare_directive":
	case "compound_statement", "colon_block":
		f.stmts(n.Children)
	case "expression_statement":
		if cs := n.NamedChildren(); len(cs) > 0 {
			v := f.expr(cs[0])
			if echo {
				f.call(&ir.Call{Kind: ir.CallFunc, Name: "echo", Args: []ir.Value{v}}, "", pos)
			}
		}
	case "echo_statement":
		f.call(&ir.Call{Kind: ir.CallFunc, Name: "echo", Args: f.exprList(n)}, "", pos)
	case "unset_statement":
		for _, c := range n.NamedChildren() {
			f.unset(c)
		}
	case "exit_statement":
		f.exit("exit", f.exprList(n), pos)
	case "return_statement":
		v := ir.None
		if c := n.NamedChildren(); len(c) > 0 {
			v = f.expr(c[0])
		}
		f.b.Return(v, pos)
	case "break_statement", "continue_statement":
		f.jumpOut(n)
	case "if_statement":
		f.ifStmt(n)
	case "while_statement":
		f.whileStmt(n)
	case "do_statement":
		f.doStmt(n)
	case "for_statement":
		f.forStmt(n)
	case "foreach_statement":
		f.foreachStmt(n)
	case "switch_statement":
		f.switchStmt(n)
	case "try_statement":
		f.tryStmt(n)
	case "global_declaration":
		for _, c := range n.NamedChildren() {
			if c.Type != "variable_name" {
				continue
			}
			name := varName(c, f.l.src)
			id := f.b.Var(name, "")
			f.b.Emit(ir.Instr{Op: ir.OpLoadGlobal, Dst: id, Name: "$" + name, Pos: posOf(c)})
			f.globals[name] = true
			f.assigned[name] = true
		}
	case "function_static_declaration":
		for _, c := range n.NamedChildren() {
			nn := c.Child("name")
			if c.Type != "static_variable_declaration" || nn == nil {
				continue
			}
			name := varName(nn, f.l.src)
			v := ir.C(ir.Null())
			if val := c.Child("value"); val != nil {
				v = f.expr(val)
			}
			f.writeVar(name, v, posOf(c))
		}
	case "const_declaration":
		for _, e := range n.NamedChildren() {
			nn, named := e.FirstOfType("name"), e.NamedChildren()
			if e.Type != "const_element" || nn == nil || len(named) < 2 {
				continue
			}
			f.b.StoreGlobal(nn.Text(f.l.src), f.expr(named[len(named)-1]), posOf(e))
		}
	case "function_definition":
		f.l.function(n)
	case "class_declaration", "interface_declaration", "trait_declaration", "enum_declaration":
		f.l.class(n, nil)
	case "namespace_definition":
		name := ""
		if nn := n.Child("name"); nn != nil {
			name = nameText(nn, f.l.src)
		}
		if body := n.Child("body"); body != nil {
			saved := f.l.scope.ns
			f.l.scope.ns = name
			f.stmts(body.Children)
			f.l.scope.ns = saved
		} else {
			f.l.scope.ns = name
		}
	case "namespace_use_declaration":
		f.l.importUse(n)
	case "declare_statement":
		for _, c := range n.NamedChildren() {
			if c.Type != "declare_directive" {
				f.stmt(c)
			}
		}
	default:
		if n.Named {
			f.expr(n)
		}
	}
}

// exprList lowers the expressions of a statement like echo or exit, whose
// operands may be grouped in a sequence expression.
func (f *fnLowerer) exprList(n *syntax.Node) []ir.Value {
	var out []ir.Value
	for _, c := range n.NamedChildren() {
		if c.Type == "sequence_expression" {
			out = append(out, f.exprList(c)...)
			continue
		}
		if c.Type == "comment" {
			continue
		}
		out = append(out, f.expr(c))
	}
	return out
}

// exit lowers exit/die: the call (a sink for its message) ends the script.
func (f *fnLowerer) exit(name string, args []ir.Value, pos ir.Pos) ir.Value {
	f.call(&ir.Call{Kind: ir.CallFunc, Name: name, Args: args}, "", pos)
	f.b.Return(ir.None, pos)
	return ir.C(ir.Null())
}

// unset lowers one operand of unset(): the variable, element or property is
// overwritten with null.
func (f *fnLowerer) unset(n *syntax.Node) {
	switch n.Type {
	case "subscript_expression":
		// Unsetting an element of an array never assigned is a no-op.
		if base, _ := subscriptParts(n); base != nil && base.Type == "variable_name" {
			if name := varName(base, f.l.src); !f.assigned[name] && !superglobals[name] && name != "this" {
				return
			}
		}
		f.assign(n, ir.C(ir.Null()), posOf(n))
	case "variable_name", "member_access_expression", "nullsafe_member_access_expression",
		"scoped_property_access_expression":
		f.assign(n, ir.C(ir.Null()), posOf(n))
	}
}

// pushFrame opens a loop or switch for break/continue.
func (f *fnLowerer) pushFrame(breakTo, contTo int, isSwitch bool) {
	lbl := f.l.label()
	f.frames = append(f.frames, frame{label: lbl, isSwitch: isSwitch})
	f.b.PushLoop(lbl, breakTo, contTo)
}

func (f *fnLowerer) popFrame() {
	f.frames = f.frames[:len(f.frames)-1]
	f.b.PopLoop()
}

// jumpOut lowers break N and continue N.
func (f *fnLowerer) jumpOut(n *syntax.Node) {
	levels := 1
	if c := n.NamedChildren(); len(c) > 0 {
		if k, err := strconv.Atoi(strings.TrimSpace(f.text(c[0]))); err == nil && k > 1 {
			levels = k
		}
	}
	pos := posOf(n)
	if levels > len(f.frames) {
		// Out of every loop: PHP rejects it; end the path.
		f.b.Return(ir.None, pos)
		return
	}
	fr := f.frames[len(f.frames)-levels]
	if n.Type == "break_statement" || fr.isSwitch {
		f.b.Break(fr.label, pos)
		return
	}
	f.b.Continue(fr.label, pos)
}

// branch ends the current block with a branch on cond and returns the then
// and else blocks.
func (f *fnLowerer) branch(cond ir.Value, pos ir.Pos) (then, els int) {
	then, els = f.b.NewBlock(), f.b.NewBlock()
	f.b.If(cond, then, els, pos)
	return then, els
}

// jumpTo jumps to target when the current point is reachable.
func (f *fnLowerer) jumpTo(target int, pos ir.Pos) {
	if f.b.Reachable() {
		f.b.Jump(target, pos)
	}
}

// cond lowers a condition, unwrapping its parentheses.
func (f *fnLowerer) cond(n *syntax.Node) ir.Value {
	if n == nil {
		return ir.C(ir.Bool(true))
	}
	return f.expr(n)
}

func (f *fnLowerer) ifStmt(n *syntax.Node) {
	pos := posOf(n)
	end := f.b.NewBlock()
	then, els := f.branch(f.cond(n.Child("condition")), pos)
	f.b.SetBlock(then)
	f.stmt(orEmpty(n.Child("body")))
	f.jumpTo(end, pos)
	f.b.SetBlock(els)
	for _, alt := range n.ChildrenByField("alternative") {
		switch alt.Type {
		case "else_if_clause":
			t, e := f.branch(f.cond(alt.Child("condition")), posOf(alt))
			f.b.SetBlock(t)
			f.stmt(orEmpty(alt.Child("body")))
			f.jumpTo(end, pos)
			f.b.SetBlock(e)
		case "else_clause":
			f.stmt(orEmpty(alt.Child("body")))
		}
	}
	f.jumpTo(end, pos)
	f.b.SetBlock(end)
}

var emptyNode = &syntax.Node{Type: "empty_statement"}

func orEmpty(n *syntax.Node) *syntax.Node {
	if n == nil {
		return emptyNode
	}
	return n
}

func (f *fnLowerer) whileStmt(n *syntax.Node) {
	pos := posOf(n)
	head, end := f.b.NewBlock(), f.b.NewBlock()
	f.jumpTo(head, pos)
	f.b.SetBlock(head)
	body, exit := f.branch(f.cond(n.Child("condition")), pos)
	f.b.SetBlock(exit)
	f.b.Jump(end, pos)
	f.b.SetBlock(body)
	f.pushFrame(end, head, false)
	f.stmt(orEmpty(n.Child("body")))
	f.popFrame()
	f.jumpTo(head, pos)
	f.b.SetBlock(end)
}

func (f *fnLowerer) doStmt(n *syntax.Node) {
	pos := posOf(n)
	body, test, end := f.b.NewBlock(), f.b.NewBlock(), f.b.NewBlock()
	f.jumpTo(body, pos)
	f.b.SetBlock(body)
	f.pushFrame(end, test, false)
	f.stmt(orEmpty(n.Child("body")))
	f.popFrame()
	f.jumpTo(test, pos)
	f.b.SetBlock(test)
	f.b.If(f.cond(n.Child("condition")), body, end, pos)
	f.b.SetBlock(end)
}

func (f *fnLowerer) forStmt(n *syntax.Node) {
	pos := posOf(n)
	if init := n.Child("initialize"); init != nil {
		f.exprList(&syntax.Node{Children: []*syntax.Node{init}})
	}
	head, update, end := f.b.NewBlock(), f.b.NewBlock(), f.b.NewBlock()
	f.jumpTo(head, pos)
	f.b.SetBlock(head)
	cond := ir.C(ir.Bool(true))
	for _, c := range n.ChildrenByField("condition") {
		if vs := f.exprList(&syntax.Node{Children: []*syntax.Node{c}}); len(vs) > 0 {
			cond = vs[len(vs)-1]
		}
	}
	body, exit := f.branch(cond, pos)
	f.b.SetBlock(exit)
	f.b.Jump(end, pos)
	f.b.SetBlock(body)
	f.pushFrame(end, update, false)
	for _, c := range n.Children {
		if c.Field == "body" || (c.Field == "" && c.Named && c.Type != "comment") {
			f.stmt(c)
		}
	}
	f.popFrame()
	f.jumpTo(update, pos)
	f.b.SetBlock(update)
	for _, c := range n.ChildrenByField("update") {
		f.exprList(&syntax.Node{Children: []*syntax.Node{c}})
	}
	f.b.Jump(head, pos)
	f.b.SetBlock(end)
}

// foreachStmt reads each element with an index-less OpLoadIndex; the key is
// an opaque value of the array.
func (f *fnLowerer) foreachStmt(n *syntax.Node) {
	pos := posOf(n)
	var subject, key, value, body *syntax.Node
	for _, c := range n.Children {
		switch {
		case c.Field == "body":
			body = c
		case !c.Named || c.Type == "comment":
		case subject == nil:
			subject = c
		case c.Type == "pair":
			if kv := c.NamedChildren(); len(kv) == 2 {
				key, value = kv[0], kv[1]
			}
		case value == nil:
			value = c
		}
	}
	if subject == nil {
		return
	}
	arr := f.expr(subject)
	head, end := f.b.NewBlock(), f.b.NewBlock()
	f.jumpTo(head, pos)
	f.b.SetBlock(head)
	more := f.b.Opaque([]ir.Value{arr}, pos)
	bodyBlk, exit := f.branch(more, pos)
	f.b.SetBlock(exit)
	f.b.Jump(end, pos)
	f.b.SetBlock(bodyBlk)
	byRef := false
	if value != nil {
		if value.Type == "by_ref" {
			byRef = true
			if c := value.NamedChildren(); len(c) > 0 {
				value = c[0]
			}
		}
		f.assign(value, f.b.LoadIndex(arr, ir.None, "", posOf(value)), posOf(value))
	}
	if key != nil {
		f.assign(key, f.b.Opaque([]ir.Value{arr}, posOf(key)), posOf(key))
	}
	f.pushFrame(end, head, false)
	f.stmt(orEmpty(body))
	f.popFrame()
	if byRef && f.b.Reachable() {
		f.b.StoreIndex(arr, ir.None, f.expr(value), pos)
	}
	f.jumpTo(head, pos)
	f.b.SetBlock(end)
}

// switchStmt lowers a switch into a chain of loose equality tests; bodies
// are laid out in order so that a case without break falls through.
func (f *fnLowerer) switchStmt(n *syntax.Node) {
	pos := posOf(n)
	subj := f.cond(n.Child("condition"))
	block := n.Child("body")
	if block == nil {
		return
	}
	var cases []*syntax.Node
	for _, c := range block.Children {
		if c.Type == "case_statement" || c.Type == "default_statement" {
			cases = append(cases, c)
		}
	}
	end := f.b.NewBlock()
	bodies := make([]int, len(cases))
	for i := range cases {
		bodies[i] = f.b.NewBlock()
	}
	deflt := end
	for i, c := range cases {
		if c.Type == "default_statement" {
			deflt = bodies[i]
			continue
		}
		eq := f.b.Binary("==", subj, f.cond(c.Child("value")), posOf(c))
		then, els := f.branch(eq, posOf(c))
		f.b.SetBlock(then)
		f.b.Jump(bodies[i], posOf(c))
		f.b.SetBlock(els)
	}
	f.jumpTo(deflt, pos)
	f.pushFrame(end, -1, true)
	for i, c := range cases {
		f.b.SetBlock(bodies[i])
		for _, s := range c.Children {
			if s.Field != "value" && s.Named {
				f.stmt(s)
			}
		}
		next := end
		if i+1 < len(bodies) {
			next = bodies[i+1]
		}
		f.jumpTo(next, posOf(c))
	}
	f.popFrame()
	f.b.SetBlock(end)
}

// tryStmt lowers try/catch/finally: the catch entries are the handlers of
// every block of the try body; finally runs after the normal and the catch
// exits.
func (f *fnLowerer) tryStmt(n *syntax.Node) {
	pos := posOf(n)
	var catches []*syntax.Node
	var finally *syntax.Node
	for _, c := range n.Children {
		switch c.Type {
		case "catch_clause":
			catches = append(catches, c)
		case "finally_clause":
			finally = c
		}
	}
	entries := make([]int, len(catches))
	for i := range catches {
		entries[i] = f.b.NewBlock()
	}
	join := f.b.NewBlock()
	if len(entries) > 0 {
		f.b.PushHandlers(entries, pos)
	}
	f.stmt(orEmpty(n.Child("body")))
	if len(entries) > 0 {
		f.b.PopHandlers(pos)
	}
	f.jumpTo(join, pos)
	for i, c := range catches {
		f.b.SetBlock(entries[i])
		var types []string
		if tl := c.Child("type"); tl != nil {
			for _, t := range tl.NamedChildren() {
				if q := f.typeName(t); q != "" {
					types = append(types, q)
				}
			}
		}
		var dst ir.VarID
		if vn := c.Child("name"); vn != nil {
			name := varName(vn, f.l.src)
			dst = f.b.Var(name, "")
			f.assigned[name] = true
		} else {
			dst = f.b.Temp("")
		}
		f.b.Catch(dst, strings.Join(types, "|"), posOf(c))
		if vn := c.Child("name"); vn != nil && (f.init || f.globals[varName(vn, f.l.src)]) {
			f.b.StoreGlobal("$"+varName(vn, f.l.src), ir.V(dst), posOf(c))
		}
		f.stmt(orEmpty(c.Child("body")))
		f.jumpTo(join, posOf(c))
	}
	f.b.SetBlock(join)
	if finally != nil {
		f.stmt(orEmpty(finally.Child("body")))
	}
}
