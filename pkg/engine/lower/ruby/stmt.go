package ruby

import (
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// skipped are nodes that produce no code.
var skipped = map[string]bool{"comment": true, "heredoc_body": true, "empty_statement": true, "uninterpreted": true,
	"alias": true, "undef": true}

// body lowers a statement sequence and returns the value of the last one
// (nil when empty) when want is set.
func (fs *fnState) body(stmts []*syntax.Node, want bool) ir.Value {
	v := ir.C(ir.Null())
	for _, s := range stmts {
		if !s.Named || skipped[s.Type] {
			continue
		}
		v = fs.expr(s, want)
	}
	return v
}

// beginBody lowers a body that may hold rescue, else and ensure clauses
// (begin, body_statement).
func (fs *fnState) beginBody(n *syntax.Node, want bool) ir.Value {
	var main, rescues []*syntax.Node
	var elseN, ensureN *syntax.Node
	for _, c := range n.Children {
		switch c.Type {
		case "rescue":
			rescues = append(rescues, c)
		case "else":
			elseN = c
		case "ensure":
			ensureN = c
		default:
			main = append(main, c)
		}
	}
	if len(rescues) == 0 && ensureN == nil {
		v := fs.body(main, want)
		if elseN != nil {
			v = fs.body(elseN.Children, want)
		}
		return v
	}
	return fs.tryBlock(n, main, rescues, elseN, ensureN, want)
}

// tryBlock lowers begin/rescue/else/ensure with handlers.
func (fs *fnState) tryBlock(n *syntax.Node, main, rescues []*syntax.Node, elseN, ensureN *syntax.Node, want bool) ir.Value {
	b := fs.b
	p := pos(n)
	res := ir.NoVar
	if want {
		res = b.Temp("")
	}
	set := func(v ir.Value) {
		if res != ir.NoVar && b.Reachable() {
			b.Assign(res, v, p)
		}
	}
	entries := make([]int, 0, len(rescues)+1)
	for range rescues {
		entries = append(entries, b.NewBlock())
	}
	catchAll := -1
	if ensureN != nil {
		catchAll = b.NewBlock()
		entries = append(entries, catchAll)
	}
	join := b.NewBlock()
	if !b.Reachable() {
		b.SetBlock(b.NewBlock())
	}
	b.PushHandlers(entries, p)
	bodyStart := b.Current()
	fs.retries = append(fs.retries, bodyStart)
	set(fs.body(main, want))
	b.PopHandlers(p)
	if elseN != nil && b.Reachable() {
		set(fs.body(elseN.Children, want))
	}
	if b.Reachable() {
		b.Jump(join, p)
	}
	for i, r := range rescues {
		b.SetBlock(entries[i])
		types := []string{}
		if ex := r.Child("exceptions"); ex != nil {
			for _, e := range ex.NamedChildren() {
				types = append(types, fs.resolve(fs.l.text(e)))
			}
		}
		if len(types) == 0 {
			types = append(types, "StandardError")
		}
		dst := b.Temp("")
		if ev := r.Child("variable"); ev != nil {
			if id := ev.NamedChildren(); len(id) > 0 {
				dst = fs.assignTarget(id[0])
			}
		}
		b.Catch(dst, strings.Join(types, "|"), pos(r))
		if bodyN := r.Child("body"); bodyN != nil {
			set(fs.body(bodyN.Children, want))
		} else {
			set(ir.C(ir.Null()))
		}
		if b.Reachable() {
			b.Jump(join, pos(r))
		}
	}
	fs.retries = fs.retries[:len(fs.retries)-1]
	if catchAll >= 0 {
		b.SetBlock(catchAll)
		ex := b.Temp("")
		b.Catch(ex, "Exception", pos(ensureN))
		fs.body(ensureN.Children, false)
		if b.Reachable() {
			b.Throw(ir.V(ex), pos(ensureN))
		}
	}
	b.SetBlock(join)
	if ensureN != nil {
		fs.body(ensureN.Children, false)
	}
	if res == ir.NoVar {
		return ir.C(ir.Null())
	}
	return ir.V(res)
}

// assignTarget returns the variable an exception or loop variable binds.
func (fs *fnState) assignTarget(n *syntax.Node) ir.VarID {
	if n.Type == "identifier" {
		if v, ok := fs.local(fs.l.text(n)); ok {
			return v
		}
		return fs.b.Var(fs.l.text(n), "")
	}
	return fs.b.Temp("")
}

// branch lowers a two-way conditional; then and els produce the values of
// the branches (els may be nil). negate swaps the branches (unless).
func (fs *fnState) branch(n *syntax.Node, cond *syntax.Node, negate bool, then, els func() ir.Value, want bool) ir.Value {
	b := fs.b
	p := pos(n)
	c := fs.expr(cond, true)
	res := ir.NoVar
	if want {
		res = b.Temp("")
	}
	tb, eb, join := b.NewBlock(), b.NewBlock(), b.NewBlock()
	if negate {
		b.If(c, eb, tb, p)
	} else {
		b.If(c, tb, eb, p)
	}
	arm := func(blk int, f func() ir.Value) {
		b.SetBlock(blk)
		v := ir.C(ir.Null())
		if f != nil {
			v = f()
		}
		if b.Reachable() {
			if res != ir.NoVar {
				b.Assign(res, v, p)
			}
			b.Jump(join, p)
		}
	}
	arm(tb, then)
	arm(eb, els)
	b.SetBlock(join)
	if res == ir.NoVar {
		return ir.C(ir.Null())
	}
	return ir.V(res)
}

// ifNode lowers if/elsif/unless with their else chains.
func (fs *fnState) ifNode(n *syntax.Node, want bool) ir.Value {
	then := n.Child("consequence")
	alt := n.Child("alternative")
	thenF := func() ir.Value {
		if then == nil {
			return ir.C(ir.Null())
		}
		return fs.body(then.Children, want)
	}
	var elseF func() ir.Value
	if alt != nil {
		elseF = func() ir.Value {
			if alt.Type == "elsif" {
				return fs.ifNode(alt, want)
			}
			return fs.body(alt.Children, want)
		}
	}
	return fs.branch(n, n.Child("condition"), n.Type == "unless", thenF, elseF, want)
}

// loop lowers while/until (and their modifiers): cond nil is `loop do`.
func (fs *fnState) loop(n, cond *syntax.Node, negate bool, body func()) {
	b := fs.b
	p := pos(n)
	head, bodyB, exit := b.NewBlock(), b.NewBlock(), b.NewBlock()
	b.Jump(head, p)
	b.SetBlock(head)
	if cond != nil {
		c := fs.expr(cond, true)
		if negate {
			b.If(c, exit, bodyB, p)
		} else {
			b.If(c, bodyB, exit, p)
		}
	} else {
		b.Jump(bodyB, p)
	}
	b.SetBlock(bodyB)
	fs.loopBody(head, exit, p, body)
}

// loopBody lowers a loop's body, which continues at head, and goes on at
// exit after the loop.
func (fs *fnState) loopBody(head, exit int, p ir.Pos, body func()) {
	fs.b.LoopBody("", exit, head, p, func() {
		fs.loops++
		body()
		fs.loops--
	})
	fs.b.SetBlock(exit)
}

// forLoop lowers `for x in list`: each iteration reads some element.
func (fs *fnState) forLoop(n *syntax.Node) {
	b := fs.b
	p := pos(n)
	coll := ir.C(ir.Null())
	if in := n.Child("value"); in != nil {
		if c := in.NamedChildren(); len(c) > 0 {
			coll = fs.expr(c[0], true)
		}
	}
	head, bodyB, exit := b.NewBlock(), b.NewBlock(), b.NewBlock()
	b.Jump(head, p)
	b.SetBlock(head)
	more := b.Opaque(nil, p)
	b.If(more, bodyB, exit, p)
	b.SetBlock(bodyB)
	elem := b.LoadIndex(coll, ir.None, "", p)
	if pat := n.Child("pattern"); pat != nil {
		fs.assignTo(pat, elem)
	}
	fs.loopBody(head, exit, p, func() {
		if bd := n.Child("body"); bd != nil {
			fs.body(bd.Children, false)
		}
	})
}

// jump lowers return, next, break, redo and retry.
func (fs *fnState) jump(n *syntax.Node) {
	b := fs.b
	p := pos(n)
	v := ir.None
	if args := n.FirstOfType("argument_list"); args != nil {
		vals, _ := fs.args(args)
		switch len(vals) {
		case 0:
		case 1:
			v = vals[0]
		default:
			v = b.MakeList("Array", vals, p)
		}
	}
	closure := fs.parent != nil
	switch n.Type {
	case "return":
		b.Return(v, p)
	case "next":
		if fs.loops > 0 {
			b.Continue("", p)
		} else {
			b.Return(v, p)
		}
	case "break":
		if fs.loops > 0 {
			b.Break("", p)
		} else {
			b.Return(v, p)
		}
	case "redo":
		switch {
		case fs.loops > 0:
			b.Continue("", p)
		case closure && fs.redo >= 0:
			b.Jump(fs.redo, p)
		default:
			b.Return(ir.None, p)
		}
	case "retry":
		if k := len(fs.retries); k > 0 {
			b.Jump(fs.retries[k-1], p)
		} else {
			b.Return(ir.None, p)
		}
	}
}
