package golang

import (
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// block lowers a { ... } block in its own scope.
func (x *fnCtx) block(n *syntax.Node) {
	x.push()
	x.stmts(n.Children)
	x.pop()
}

func (x *fnCtx) stmts(list []*syntax.Node) {
	for _, c := range list {
		if c.Named {
			x.stmt(c, "")
		}
	}
}

// stmt lowers one statement; label is the label of an enclosing labelled
// statement, for loops, switches and selects.
func (x *fnCtx) stmt(n *syntax.Node, label string) {
	b := x.b
	switch n.Type {
	case "block":
		x.block(n)
	case "expression_statement":
		for _, c := range n.NamedChildren() {
			x.expr(c)
		}
	case "short_var_declaration":
		x.assign(n.Child("left").NamedChildren(), n.Child("right").NamedChildren(), true)
	case "assignment_statement":
		x.assignStmt(n)
	case "inc_statement", "dec_statement":
		t := firstNamed(n)
		if t == nil {
			return
		}
		op := "+"
		if n.Type == "dec_statement" {
			op = "-"
		}
		x.assignTo(t, b.Binary(op, x.expr(t), ir.C(ir.Int(1)), pos(n)), false)
	case "var_declaration", "const_declaration":
		x.localDecl(n)
	case "type_declaration":
		x.fc.declareTypes(n)
		x.fc.declareClasses(n)
	case "return_statement":
		x.returnStmt(n)
	case "if_statement":
		x.ifStmt(n)
	case "for_statement":
		x.forStmt(n, label)
	case "expression_switch_statement":
		x.switchStmt(n, label)
	case "type_switch_statement":
		x.typeSwitch(n, label)
	case "select_statement":
		x.selectStmt(n, label)
	case "labeled_statement":
		name := x.fc.text(n.Child("label"))
		lb := x.labelBlock(name)
		b.Jump(lb, pos(n))
		b.SetBlock(lb)
		for _, c := range n.Children {
			if c.Named && c.Field != "label" {
				x.stmt(c, name)
			}
		}
	case "break_statement":
		b.Break(x.labelOf(n), pos(n))
	case "continue_statement":
		b.Continue(x.labelOf(n), pos(n))
	case "goto_statement":
		b.Jump(x.labelBlock(x.labelOf(n)), pos(n))
	case "fallthrough_statement":
		// Handled by the switch that lowers the clause's body.
	case "defer_statement":
		x.deferStmt(n)
	case "go_statement":
		for _, c := range n.NamedChildren() {
			x.expr(c)
		}
	case "send_statement":
		ch := x.expr(n.Child("channel"))
		b.StoreIndex(ch, ir.None, x.expr(n.Child("value")), pos(n))
	case "empty_statement", "comment":
	default:
		// Expressions in statement position after error recovery.
		for _, c := range n.NamedChildren() {
			if !isTypeExpr(c) {
				x.expr(c)
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

func (x *fnCtx) labelOf(n *syntax.Node) string {
	if l := n.FirstOfType("label_name"); l != nil {
		return x.fc.text(l)
	}
	return ""
}

// labelBlock returns the block a label starts, creating it on first use
// (goto may jump forward).
func (x *fnCtx) labelBlock(name string) int {
	if x.labels == nil {
		x.labels = map[string]int{}
	}
	if id, ok := x.labels[name]; ok {
		return id
	}
	id := x.b.NewBlock()
	x.labels[name] = id
	return id
}

func (x *fnCtx) assignStmt(n *syntax.Node) {
	lefts, rights := n.Child("left").NamedChildren(), n.Child("right").NamedChildren()
	op := "="
	if o := n.Child("operator"); o != nil {
		op = o.Type
	}
	if op == "=" {
		x.assign(lefts, rights, false)
		return
	}
	if len(lefts) == 0 || len(rights) == 0 {
		return
	}
	bin := strings.TrimSuffix(op, "=")
	if bin == "&^" {
		bin = "&"
	}
	l := x.expr(lefts[0])
	r := x.expr(rights[0])
	x.assignTo(lefts[0], x.b.Binary(bin, l, r, pos(n)), false)
}

// assign lowers `lefts = rights` and `lefts := rights`. Right-hand sides
// are all evaluated before any assignment (a, b = b, a).
func (x *fnCtx) assign(lefts, rights []*syntax.Node, define bool) {
	vals := x.rhsValues(rights, len(lefts), nil)
	if len(lefts) > 1 {
		assigned := map[string]bool{}
		for _, l := range lefts {
			if l.Type == "identifier" {
				assigned[x.fc.text(l)] = true
			}
		}
		for i, v := range vals {
			if v.IsVar() && assigned[x.b.Fn.Vars[v.Var].Name] {
				t := x.b.Temp(x.b.Fn.Vars[v.Var].Type)
				x.b.Assign(t, v, pos(rights[min(i, len(rights)-1)]))
				x.kinds.set(t, x.kinds.get(v.Var))
				vals[i] = ir.V(t)
			}
		}
	}
	for i, l := range lefts {
		x.assignTo(l, vals[i], define)
	}
}

// rhsValues evaluates the right-hand side of an assignment or declaration
// of n variables: one value each, the first result of a multi-value
// expression followed by fresh unknown values, or zero values of typ.
func (x *fnCtx) rhsValues(rights []*syntax.Node, n int, typ *syntax.Node) []ir.Value {
	out := make([]ir.Value, 0, n)
	switch {
	case len(rights) == 0:
		for i := 0; i < n; i++ {
			out = append(out, x.zero(typ, pos(typ)))
		}
	case len(rights) == 1 && n > 1:
		first := x.expr(rights[0])
		out = append(out, first)
		call := rights[0]
		for call.Type == "parenthesized_expression" && firstNamed(call) != nil {
			call = firstNamed(call)
		}
		for i := 1; i < n; i++ {
			if call.Type == "call_expression" && first.IsVar() {
				// the call's later results
				out = append(out, x.b.LoadField(first, "#"+strconv.Itoa(i), "", pos(rights[0])))
			} else {
				out = append(out, x.b.Opaque(nil, pos(rights[0])))
			}
		}
	default:
		for _, r := range rights {
			out = append(out, x.expr(r))
		}
		for len(out) < n {
			out = append(out, x.b.Opaque(nil, pos(rights[0])))
		}
	}
	if t := x.fc.typeName(typ); t != "" {
		// The declared type is the type of a computed value (a call's
		// result the file knows nothing of): `var db *sql.DB = open()`.
		for _, v := range out {
			if v.IsVar() && x.b.Fn.Vars[v.Var].Type == "" && strings.HasPrefix(x.b.Fn.Vars[v.Var].Name, "$t") {
				x.b.SetType(v.Var, t)
			}
		}
	}
	return out
}

// assignTo stores v into an assignable expression.
func (x *fnCtx) assignTo(l *syntax.Node, v ir.Value, define bool) {
	b := x.b
	switch l.Type {
	case "identifier":
		name := x.fc.text(l)
		if name == "_" {
			return
		}
		typ := x.typeOf(v)
		var id ir.VarID
		if _, inner := x.scopes[len(x.scopes)-1][name]; define && !inner {
			id = x.declare(name, typ)
		} else if found, ok := x.lookup(name); ok {
			id = found
			if b.Fn.Vars[id].Type == "" {
				b.SetType(id, typ)
			}
		} else {
			b.StoreGlobal(x.globalName(name), v, pos(l))
			return
		}
		b.Assign(id, v, pos(l))
		if k := x.kindOf(v); k != kUnknown {
			x.kinds.set(id, k)
		}
	case "selector_expression":
		op, field := l.Child("operand"), x.fc.text(l.Child("field"))
		if p := x.importOf(op); p != "" {
			b.StoreGlobal(p+"."+field, v, pos(l))
			return
		}
		b.StoreField(x.expr(op), field, v, pos(l))
	case "index_expression":
		obj := x.expr(l.Child("operand"))
		b.StoreIndex(obj, x.expr(l.Child("index")), v, pos(l))
	case "unary_expression", "parenthesized_expression":
		if t := l.Child("operand"); t != nil {
			x.assignTo(t, v, define)
		} else if t := firstNamed(l); t != nil {
			x.assignTo(t, v, define)
		}
	default:
		x.expr(l)
	}
}

// globalName qualifies a package-level name that is not a local variable.
func (x *fnCtx) globalName(name string) string {
	if p := x.fc.dotImport(name); p != "" {
		return p + "." + name
	}
	return x.fc.pkg + "." + name
}

// localDecl lowers var and const declarations inside a function.
func (x *fnCtx) localDecl(n *syntax.Node) {
	x.eachDeclared(n, func(nm, t *syntax.Node, name string, v ir.Value) {
		typ := x.fc.typeName(t)
		if typ == "" {
			typ = x.typeOf(v)
		}
		id := x.declare(name, typ)
		x.b.Assign(id, v, pos(nm))
		if k := x.fc.typeKind(t); k != kUnknown {
			x.kinds.set(id, k)
		} else if k := x.kindOf(v); k != kUnknown {
			x.kinds.set(id, k)
		}
	})
}

func (x *fnCtx) returnStmt(n *syntax.Node) {
	var vals []*syntax.Node
	if l := n.FirstOfType("expression_list"); l != nil {
		vals = l.NamedChildren()
	} else {
		for _, c := range n.Children {
			if c.Named {
				vals = append(vals, c)
			}
		}
	}
	ret := ir.None
	var more []ir.Value
	for i, e := range vals {
		v := x.expr(e)
		if i == 0 {
			ret = v
		} else {
			more = append(more, v)
		}
	}
	if len(vals) == 0 && len(x.named) > 0 {
		ret = ir.V(x.named[0])
		for _, id := range x.named[1:] {
			more = append(more, ir.V(id))
		}
	}
	x.runDefers(pos(n))
	x.b.ReturnMore(ret, more, pos(n))
}

func (x *fnCtx) deferStmt(n *syntax.Node) {
	call := firstNamed(n)
	for call != nil && call.Type == "parenthesized_expression" {
		call = firstNamed(call)
	}
	if call == nil || call.Type != "call_expression" {
		return
	}
	c, _, ok := x.buildCall(call)
	if !ok {
		x.expr(call)
		return
	}
	x.defers = append(x.defers, deferred{call: c, pos: pos(n)})
}

func (x *fnCtx) ifStmt(n *syntax.Node) {
	b := x.b
	x.push()
	defer x.pop()
	if init := n.Child("initializer"); init != nil {
		x.stmt(init, "")
	}
	then, els := b.NewBlock(), b.NewBlock()
	x.cond(n.Child("condition"), then, els)
	join := -1
	toJoin := func() {
		if b.Reachable() {
			if join < 0 {
				join = b.NewBlock()
			}
			b.Jump(join, pos(n))
		}
	}
	b.SetBlock(then)
	if c := n.Child("consequence"); c != nil {
		x.block(c)
	}
	toJoin()
	b.SetBlock(els)
	if a := n.Child("alternative"); a != nil {
		x.stmt(a, "")
	}
	toJoin()
	if join >= 0 {
		b.SetBlock(join)
	}
}

// cond lowers a condition into branches to then and els, splitting && and
// || and negation into control flow.
func (x *fnCtx) cond(n *syntax.Node, then, els int) {
	b := x.b
	if n == nil {
		b.Jump(then, ir.Pos{})
		return
	}
	switch n.Type {
	case "parenthesized_expression":
		if c := firstNamed(n); c != nil {
			x.cond(c, then, els)
			return
		}
	case "unary_expression":
		if op := n.Child("operator"); op != nil && op.Type == "!" {
			x.cond(n.Child("operand"), els, then)
			return
		}
	case "binary_expression":
		switch n.Child("operator").Type {
		case "&&":
			mid := b.NewBlock()
			x.cond(n.Child("left"), mid, els)
			b.SetBlock(mid)
			x.cond(n.Child("right"), then, els)
			return
		case "||":
			mid := b.NewBlock()
			x.cond(n.Child("left"), then, mid)
			b.SetBlock(mid)
			x.cond(n.Child("right"), then, els)
			return
		}
	}
	v := x.expr(n)
	b.If(v, then, els, pos(n))
}

func (x *fnCtx) forStmt(n *syntax.Node, label string) {
	b := x.b
	x.push()
	defer x.pop()
	body := n.Child("body")
	var clause, cond *syntax.Node
	for _, c := range n.Children {
		if c.Named && c.Field != "body" {
			switch c.Type {
			case "for_clause", "range_clause":
				clause = c
			default:
				cond = c
			}
		}
	}
	if clause != nil && clause.Type == "range_clause" {
		x.rangeLoop(n, clause, body, label)
		return
	}
	var update *syntax.Node
	if clause != nil {
		if init := clause.Child("initializer"); init != nil {
			x.stmt(init, "")
		}
		cond, update = clause.Child("condition"), clause.Child("update")
	}
	head := b.NewBlock()
	b.Jump(head, pos(n))
	b.SetBlock(head)
	bodyB, exit, post := b.NewBlock(), b.NewBlock(), b.NewBlock()
	if cond != nil {
		x.cond(cond, bodyB, exit)
	} else {
		b.Jump(bodyB, pos(n))
	}
	b.PushLoop(label, exit, post)
	b.SetBlock(bodyB)
	if body != nil {
		x.block(body)
	}
	if b.Reachable() {
		b.Jump(post, pos(n))
	}
	b.PopLoop()
	b.SetBlock(post)
	if update != nil {
		x.stmt(update, "")
	}
	b.Jump(head, pos(n))
	b.SetBlock(exit)
}

// rangeLoop lowers `for k, v := range coll { body }` (see the package
// comment for what k and v hold).
func (x *fnCtx) rangeLoop(n, clause, body *syntax.Node, label string) {
	b := x.b
	right := clause.Child("right")
	coll := x.expr(right)
	k := x.kindOf(coll)
	var lefts []*syntax.Node
	define := false
	if l := clause.Child("left"); l != nil {
		lefts = l.NamedChildren()
		if right != nil && l.End <= right.Start {
			define = strings.Contains(string(x.fc.src[l.End:right.Start]), ":=")
		}
	}
	head := b.NewBlock()
	b.Jump(head, pos(n))
	b.SetBlock(head)
	bodyB, exit := b.NewBlock(), b.NewBlock()
	b.If(b.Opaque(nil, pos(clause)), bodyB, exit, pos(clause))
	b.PushLoop(label, exit, head)
	b.SetBlock(bodyB)
	x.push()
	p := pos(clause)
	elem := func() ir.Value {
		v := b.LoadIndex(coll, ir.None, x.elemType(coll), p)
		return v
	}
	key := func() ir.Value {
		switch k {
		case kSlice, kString, kNumber:
			return b.Opaque(nil, p)
		}
		return b.Opaque([]ir.Value{coll}, p)
	}
	if len(lefts) >= 1 {
		if k == kChan {
			x.assignTo(lefts[0], elem(), define)
		} else {
			x.assignTo(lefts[0], key(), define)
		}
	}
	if len(lefts) >= 2 {
		x.assignTo(lefts[1], elem(), define)
	}
	if body != nil {
		x.block(body)
	}
	x.pop()
	if b.Reachable() {
		b.Jump(head, pos(n))
	}
	b.PopLoop()
	b.SetBlock(exit)
}

// clauseBody returns a case clause's statements (its fields are the case
// values or types).
func clauseBody(cl *syntax.Node) []*syntax.Node {
	var out []*syntax.Node
	for _, c := range cl.Children {
		if c.Named && c.Field == "" {
			out = append(out, c)
		}
	}
	return out
}

func endsWithFallthrough(stmts []*syntax.Node) bool {
	return len(stmts) > 0 && stmts[len(stmts)-1].Type == "fallthrough_statement"
}

// switchStmt lowers an expression switch into a chain of equality branches.
func (x *fnCtx) switchStmt(n *syntax.Node, label string) {
	b := x.b
	x.push()
	defer x.pop()
	if init := n.Child("initializer"); init != nil {
		x.stmt(init, "")
	}
	tag := ir.None
	if v := n.Child("value"); v != nil {
		tag = x.expr(v)
	}
	var clauses []*syntax.Node
	for _, c := range n.Children {
		if c.Type == "expression_case" || c.Type == "default_case" {
			clauses = append(clauses, c)
		}
	}
	exit := b.NewBlock()
	bodies := make([]int, len(clauses))
	for i := range clauses {
		bodies[i] = b.NewBlock()
	}
	def := exit
	for i, cl := range clauses {
		if cl.Type == "default_case" {
			def = bodies[i]
			continue
		}
		var vals []*syntax.Node
		if v := cl.Child("value"); v != nil {
			vals = v.NamedChildren()
		}
		for _, v := range vals {
			next := b.NewBlock()
			if tag.IsNone() {
				x.cond(v, bodies[i], next)
			} else {
				b.If(b.Binary("==", tag, x.expr(v), pos(v)), bodies[i], next, pos(v))
			}
			b.SetBlock(next)
		}
	}
	b.Jump(def, pos(n))
	x.clauseBodies(clauses, bodies, exit, label, nil)
	b.SetBlock(exit)
}

// clauseBodies lowers the bodies of switch or select clauses; bind, when
// set, runs at the start of each body (type switch variables, received
// values).
func (x *fnCtx) clauseBodies(clauses []*syntax.Node, bodies []int, exit int, label string, bind func(i int)) {
	b := x.b
	b.PushLoop(label, exit, -1)
	for i, cl := range clauses {
		b.SetBlock(bodies[i])
		x.push()
		if bind != nil {
			bind(i)
		}
		stmts := clauseBody(cl)
		x.stmts(stmts)
		if b.Reachable() {
			if endsWithFallthrough(stmts) && i+1 < len(bodies) {
				b.Jump(bodies[i+1], pos(cl))
			} else {
				b.Jump(exit, pos(cl))
			}
		}
		x.pop()
	}
	b.PopLoop()
}

// typeSwitch lowers `switch v := x.(type)` into instanceof branches.
func (x *fnCtx) typeSwitch(n *syntax.Node, label string) {
	b := x.b
	x.push()
	defer x.pop()
	if init := n.Child("initializer"); init != nil {
		x.stmt(init, "")
	}
	subject := x.expr(n.Child("value"))
	alias := ""
	if a := n.Child("alias"); a != nil {
		if id := firstNamed(a); id != nil {
			alias = x.fc.text(id)
		}
	}
	var clauses []*syntax.Node
	for _, c := range n.Children {
		if c.Type == "type_case" || c.Type == "default_case" {
			clauses = append(clauses, c)
		}
	}
	exit := b.NewBlock()
	bodies := make([]int, len(clauses))
	caseTypes := make([][]*syntax.Node, len(clauses))
	for i, cl := range clauses {
		bodies[i] = b.NewBlock()
		for _, t := range cl.ChildrenByField("type") {
			if t.Named {
				caseTypes[i] = append(caseTypes[i], t)
			}
		}
	}
	def := exit
	for i, cl := range clauses {
		if cl.Type == "default_case" {
			def = bodies[i]
			continue
		}
		for _, t := range caseTypes[i] {
			next := b.NewBlock()
			var c ir.Value
			if x.fc.text(t) == "nil" {
				c = b.Binary("==", subject, ir.C(ir.Null()), pos(t))
			} else {
				c = b.Binary("instanceof", subject, ir.C(ir.Str(x.fc.typeName(t))), pos(t))
			}
			b.If(c, bodies[i], next, pos(t))
			b.SetBlock(next)
		}
	}
	b.Jump(def, pos(n))
	x.clauseBodies(clauses, bodies, exit, label, func(i int) {
		if alias == "" {
			return
		}
		v := subject
		if ts := caseTypes[i]; len(ts) == 1 && x.fc.text(ts[0]) != "nil" {
			v = b.Cast(x.fc.typeName(ts[0]), subject, pos(ts[0]))
			x.kinds.set(v.Var, x.fc.typeKind(ts[0]))
		}
		id := x.declare(alias, x.typeOf(v))
		b.Assign(id, v, pos(clauses[i]))
		x.kinds.set(id, x.kindOf(v))
	})
	b.SetBlock(exit)
}

// selectStmt lowers select: each case is taken on an unknown condition.
func (x *fnCtx) selectStmt(n *syntax.Node, label string) {
	b := x.b
	var clauses []*syntax.Node
	for _, c := range n.Children {
		if c.Type == "communication_case" || c.Type == "default_case" {
			clauses = append(clauses, c)
		}
	}
	exit := b.NewBlock()
	bodies := make([]int, len(clauses))
	for i := range clauses {
		bodies[i] = b.NewBlock()
	}
	for i := range clauses {
		if i == len(clauses)-1 {
			b.Jump(bodies[i], pos(n))
			break
		}
		next := b.NewBlock()
		b.If(b.Opaque(nil, pos(clauses[i])), bodies[i], next, pos(clauses[i]))
		b.SetBlock(next)
	}
	if len(clauses) == 0 {
		b.Jump(exit, pos(n))
	}
	x.clauseBodies(clauses, bodies, exit, label, func(i int) {
		comm := clauses[i].Child("communication")
		if comm == nil {
			return
		}
		switch comm.Type {
		case "send_statement":
			ch := x.expr(comm.Child("channel"))
			b.StoreIndex(ch, ir.None, x.expr(comm.Child("value")), pos(comm))
		case "receive_statement":
			left, right := comm.Child("left"), comm.Child("right")
			if left == nil {
				x.expr(right)
				return
			}
			define := right != nil && left.End <= right.Start &&
				strings.Contains(string(x.fc.src[left.End:right.Start]), ":=")
			x.assign(left.NamedChildren(), []*syntax.Node{right}, define)
		default:
			x.stmt(comm, "")
		}
	})
	b.SetBlock(exit)
}
