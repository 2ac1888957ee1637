package ruby

import (
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// assignment lowers `lhs = rhs`, including multiple assignment.
func (fs *fnState) assignment(n *syntax.Node) ir.Value {
	left, right := n.Child("left"), n.Child("right")
	if left == nil {
		return fs.exprOrNil(right)
	}
	if left.Type == "left_assignment_list" || (right != nil && right.Type == "right_assignment_list") {
		return fs.multiAssign(left, right)
	}
	v := fs.exprOrNil(right)
	if right != nil && (right.Type == "lambda" || isClosureCall(fs, right)) && left.Type == "identifier" {
		fs.markProc(fs.l.text(left))
	}
	fs.assignTo(left, v)
	return v
}

// isClosureCall reports whether n is lambda { }, proc { } or Proc.new { }.
func isClosureCall(fs *fnState, n *syntax.Node) bool {
	if n.Type != "call" || n.Child("block") == nil {
		return false
	}
	m := fs.l.text(n.Child("method"))
	r := n.Child("receiver")
	return (r == nil && (m == "lambda" || m == "proc")) || (r != nil && fs.l.text(r) == "Proc" && m == "new")
}

// multiAssign lowers a, *b = x, y, z and a, b = pair.
func (fs *fnState) multiAssign(left, right *syntax.Node) ir.Value {
	b := fs.b
	p := pos(left)
	var targets []*syntax.Node
	if left.Type == "left_assignment_list" || left.Type == "destructured_left_assignment" {
		targets = left.NamedChildren()
	} else {
		targets = []*syntax.Node{left}
	}
	var rhs []*syntax.Node
	if right != nil && right.Type == "right_assignment_list" {
		rhs = right.NamedChildren()
	} else if right != nil {
		rhs = []*syntax.Node{right}
	}
	splat := false
	for _, t := range targets {
		splat = splat || t.Type == "rest_assignment"
	}
	for _, r := range rhs {
		splat = splat || r.Type == "splat_argument"
	}
	if !splat && len(rhs) == len(targets) && len(rhs) > 1 {
		vals := make([]ir.Value, len(rhs))
		for i, r := range rhs {
			vals[i] = fs.expr(r, true)
		}
		for i, t := range targets {
			fs.assignTo(t, vals[i])
		}
		return b.MakeList("Array", vals, p)
	}
	var whole ir.Value
	if len(rhs) == 1 && rhs[0].Type != "splat_argument" {
		whole = fs.expr(rhs[0], true)
	} else {
		arr := &syntax.Node{Type: "array", Children: rhs}
		if right != nil {
			arr.Start, arr.End, arr.Row, arr.EndRow = right.Start, right.End, right.Row, right.EndRow
		}
		whole = fs.arrayLit(arr)
	}
	fs.destructureAssign(targets, whole)
	return whole
}

// destructureAssign binds each target to the element of v at its position
// (a splat target to v itself). Targets after a splat count from the end,
// whose position is not known here, so they read an unknown index.
func (fs *fnState) destructureAssign(targets []*syntax.Node, v ir.Value) {
	star := false
	for i, t := range targets {
		idx := ir.C(ir.Int(int64(i)))
		if star {
			idx = ir.None
		}
		switch t.Type {
		case "rest_assignment":
			star = true
			if c := t.NamedChildren(); len(c) > 0 {
				fs.assignTo(c[0], v)
			}
		case "destructured_left_assignment":
			fs.destructureAssign(t.NamedChildren(), fs.b.LoadIndex(v, idx, "", pos(t)))
		default:
			fs.assignTo(t, fs.b.LoadIndex(v, idx, "", pos(t)))
		}
	}
}

// assignTo stores v into an assignable expression.
func (fs *fnState) assignTo(t *syntax.Node, v ir.Value) {
	b := fs.b
	p := pos(t)
	switch t.Type {
	case "identifier":
		name := fs.l.text(t)
		id, ok := fs.local(name)
		if !ok {
			typ := ""
			if v.IsVar() {
				typ = b.Fn.Vars[v.Var].Type
			}
			id = b.Var(name, typ)
		}
		b.Assign(id, v, p)
	case "instance_variable":
		name := fs.l.text(t)[1:]
		if self, _, ok := fs.selfValue(); ok && !fs.classBody {
			b.StoreField(self, name, v, p)
		} else {
			b.StoreGlobal(fs.qualifiedGlobal("@"+name), v, p)
		}
	case "class_variable":
		b.StoreGlobal(fs.qualifiedGlobal(fs.l.text(t)), v, p)
	case "global_variable":
		b.StoreGlobal(fs.l.text(t), v, p)
	case "constant", "scope_resolution":
		nest := ""
		if k := len(fs.ctx.nesting); k > 0 {
			nest = fs.ctx.nesting[k-1]
		}
		b.StoreGlobal(fs.l.declName(t, nest), v, p)
	case "element_reference":
		obj := t.Child("object")
		var idx []ir.Value
		for _, c := range t.NamedChildren() {
			if c != obj && c.Type != "comment" {
				idx = append(idx, fs.expr(c, true))
			}
		}
		recv := fs.typedRecv(fs.exprOrNil(obj), obj)
		if obj != nil && (obj.Type == "call" || (obj.Type == "identifier" && !fs.isLocal(obj))) || len(idx) != 1 {
			b.Call(&ir.Call{Kind: ir.CallMethod, Name: "[]=", Recv: recv, Args: append(idx, v)}, "", p)
			return
		}
		b.StoreIndex(recv, idx[0], v, p)
	case "call":
		recvN := t.Child("receiver")
		name := fs.l.text(t.Child("method")) + "="
		if recvN == nil {
			b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallFunc, Name: name, Args: []ir.Value{v}}, "", p)
			return
		}
		if isConstPath(recvN) {
			b.Call(&ir.Call{Recv: ir.None, Kind: ir.CallStatic, Name: name, Qual: fs.resolve(fs.l.text(recvN)), Args: []ir.Value{v}}, "", p)
			return
		}
		recv := fs.expr(recvN, true)
		b.Call(&ir.Call{Kind: ir.CallMethod, Name: name, Recv: recv, Args: []ir.Value{v}}, "", p)
	case "left_assignment_list", "destructured_left_assignment":
		fs.destructureAssign(t.NamedChildren(), v)
	case "rest_assignment":
		if c := t.NamedChildren(); len(c) > 0 {
			fs.assignTo(c[0], v)
		}
	default:
		fs.expr(t, false)
	}
}

func (fs *fnState) isLocal(n *syntax.Node) bool {
	_, ok := fs.local(fs.l.text(n))
	return ok
}

// opAssign lowers x += y, x ||= y, h[k] <<= y, obj.a &&= y.
func (fs *fnState) opAssign(n *syntax.Node) ir.Value {
	b := fs.b
	p := pos(n)
	left, right := n.Child("left"), n.Child("right")
	op := strings.TrimSuffix(fs.l.text(n.Child("operator")), "=")
	if left == nil {
		return fs.exprOrNil(right)
	}
	if left.Type == "identifier" {
		if _, ok := fs.local(fs.l.text(left)); !ok {
			fs.b.Var(fs.l.text(left), "") // x ||= v declares x
		}
	}
	// Evaluate the target's parts once.
	var load func() ir.Value
	var store func(ir.Value)
	switch left.Type {
	case "element_reference":
		obj := left.Child("object")
		recv := fs.typedRecv(fs.exprOrNil(obj), obj)
		idx := ir.None
		for _, c := range left.NamedChildren() {
			if c != obj && c.Type != "comment" {
				idx = fs.expr(c, true)
				break
			}
		}
		load = func() ir.Value { return b.LoadIndex(recv, idx, "", p) }
		store = func(v ir.Value) { b.StoreIndex(recv, idx, v, p) }
	case "call":
		if recvN := left.Child("receiver"); recvN != nil && !isConstPath(recvN) {
			recv := fs.expr(recvN, true)
			name := fs.l.text(left.Child("method"))
			load = func() ir.Value {
				return b.Call(&ir.Call{Kind: ir.CallMethod, Name: name, Recv: recv}, "", p)
			}
			store = func(v ir.Value) {
				b.Call(&ir.Call{Kind: ir.CallMethod, Name: name + "=", Recv: recv, Args: []ir.Value{v}}, "", p)
			}
		}
	}
	if load == nil {
		load = func() ir.Value { return fs.expr(left, true) }
		store = func(v ir.Value) { fs.assignTo(left, v) }
	}
	cur := load()
	switch op {
	case "||", "&&":
		res := b.Temp("")
		b.Assign(res, cur, p)
		set, join := b.NewBlock(), b.NewBlock()
		if op == "||" {
			b.If(cur, join, set, p)
		} else {
			b.If(cur, set, join, p)
		}
		b.SetBlock(set)
		v := fs.exprOrNil(right)
		if b.Reachable() {
			store(v)
			b.Assign(res, v, p)
			b.Jump(join, p)
		}
		b.SetBlock(join)
		return ir.V(res)
	case "<<":
		v := b.Call(&ir.Call{Kind: ir.CallMethod, Name: "<<", Recv: cur, Args: []ir.Value{fs.exprOrNil(right)}}, "", p)
		store(v)
		return v
	}
	v := b.Binary(op, cur, fs.exprOrNil(right), p)
	store(v)
	return v
}
