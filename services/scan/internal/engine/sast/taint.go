package sast

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/vulnscan/vulnscan/services/scan/internal/engine/finding"
)

const srcBit = uint64(1) // label of data from a real source; bit i+1 is parameter i

// step is one hop of a taint trace, linked to its predecessor.
type step struct {
	prev  *step
	line  int
	label string
	n     int
}

func push(prev *step, line int, label string) *step {
	n := 1
	if prev != nil {
		if prev.n >= 16 {
			return prev
		}
		n = prev.n + 1
	}
	return &step{prev: prev, line: line, label: label, n: n}
}

func (s *step) list() []*step {
	var out []*step
	for ; s != nil; s = s.prev {
		out = append(out, s)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// taint is the abstract value of an expression: which labels may reach it and
// for which vulnerability classes it has been sanitized.
type taint struct {
	bits uint64
	san  uint32 // classes sanitized on the paths from a real source
	psan uint32 // classes sanitized on the paths from parameters
	path *step
}

func (t taint) empty() bool { return t.bits == 0 }

func union(a, b taint) taint {
	if a.empty() {
		return b
	}
	if b.empty() {
		return a
	}
	out := taint{bits: a.bits | b.bits, path: a.path}
	switch {
	case a.bits&srcBit != 0 && b.bits&srcBit != 0:
		out.san = a.san & b.san
	case a.bits&srcBit != 0:
		out.san = a.san
	default:
		out.san = b.san
	}
	switch ap, bp := a.bits&^srcBit != 0, b.bits&^srcBit != 0; {
	case ap && bp:
		out.psan = a.psan & b.psan
	case ap:
		out.psan = a.psan
	default:
		out.psan = b.psan
	}
	if a.bits&srcBit == 0 && b.bits&srcBit != 0 {
		out.path = b.path
	}
	return out
}

type paramSink struct {
	param int
	rule  *ruleSpec
	san   uint32
	sink  *node
	path  *step
	fn    *funcInfo
}

type funcInfo struct {
	node       *node
	body       *node
	outer      *funcInfo
	name       string
	header     string
	params     []*node // name nodes
	method     bool
	ret        taint
	paramSinks []paramSink
	finalEnv   map[string]taint
}

type fileCtx struct {
	w        *Worker
	ctx      interface{ Err() error }
	spec     *langSpec
	rs       *ruleSet
	src      []byte
	file     string
	root     *node
	lines    []string
	funcs    map[string]*funcInfo
	methods  map[string]*funcInfo
	all      []*funcInfo
	findings []finding.Finding
	seen     map[string]bool
	ops      int
	budget   int
	changed  bool

	// per-function state
	cur *funcInfo
	env map[string]taint
}

func (fc *fileCtx) tick() {
	fc.ops++
	if fc.ops > fc.budget {
		panic(abort{ErrTimeout})
	}
	if fc.ops&0x3ff == 0 && fc.ctx.Err() != nil {
		panic(abort{ErrTimeout})
	}
}

func (fc *fileCtx) text(n *node) string { return n.text(fc.src) }

// norm returns the node text without whitespace, capped.
func (fc *fileCtx) norm(n *node, limit int) string {
	end := n.end
	if int(end-n.start) > limit*2 {
		end = n.start + uint32(limit*2)
	}
	s := string(fc.src[n.start:end])
	s = strings.Join(strings.Fields(s), "")
	if len(s) > limit {
		s = s[:limit]
	}
	return s
}

func (fc *fileCtx) run() {
	fc.collectFuncs(fc.root, nil)
	module := &funcInfo{node: fc.root, body: fc.root, name: "<module>"}
	fc.all = append([]*funcInfo{module}, fc.all...)
	for round := 0; round < 4; round++ {
		fc.changed = false
		for _, f := range fc.all {
			fc.analyze(f)
		}
		if !fc.changed {
			break
		}
	}
	fc.patterns(fc.root)
}

var memberTypes = set("attribute", "member_expression", "selector_expression", "field_access", "subscript",
	"subscript_expression", "index_expression", "array_access", "scoped_identifier",
	"member_access_expression", "nullsafe_member_access_expression", "scoped_property_access_expression", "element_reference")

func (fc *fileCtx) collectFuncs(n *node, outer *funcInfo) {
	fc.tick()
	if fc.spec.funcs[n.typ] {
		f := fc.newFunc(n, outer)
		fc.all = append(fc.all, f)
		outer = f
	}
	for _, c := range n.children {
		fc.collectFuncs(c, outer)
	}
}

func (fc *fileCtx) newFunc(n *node, outer *funcInfo) *funcInfo {
	f := &funcInfo{node: n, outer: outer, body: n.child("body")}
	if f.body == nil {
		f.body = n
	}
	if nm := n.child("name"); nm != nil {
		f.name = fc.text(nm)
	} else if p := n.parent; p != nil {
		switch p.typ {
		case "variable_declarator", "pair", "assignment_expression":
			for _, fld := range []string{"name", "key", "left"} {
				if k := p.child(fld); k != nil {
					f.name = fc.norm(k, 100)
					break
				}
			}
		}
	}
	for _, s := range fc.spec.selfs {
		f.name = strings.TrimPrefix(f.name, s)
	}
	headStart := n.start
	if n.parent != nil && n.parent.typ == "decorated_definition" {
		headStart = n.parent.start
	}
	if f.body.start >= headStart {
		f.header = string(fc.src[headStart:f.body.start])
	}
	f.method = n.typ == "method_declaration" || n.typ == "method_definition" ||
		(fc.spec == pythonSpec && outer == nil && n.parent != nil && inClass(n))
	params := n.child("parameters")
	if params == nil {
		params = n.child("parameter")
	}
	if params != nil {
		if fc.spec.idents[params.typ] {
			f.params = append(f.params, params)
		} else {
			for _, c := range params.children {
				if fc.spec.comments[c.typ] {
					continue
				}
				f.params = append(f.params, fc.paramNames(c)...)
			}
		}
	}
	if fc.spec == pythonSpec && len(f.params) > 0 {
		if first := fc.text(f.params[0]); first == "self" || first == "cls" {
			f.params = f.params[1:]
		}
	}
	if len(f.params) > 62 {
		f.params = f.params[:62]
	}
	if f.name != "" && f.name != "<module>" {
		if _, dup := fc.funcs[f.name]; !dup {
			fc.funcs[f.name] = f
		}
		if f.method {
			fc.methods[f.name] = f
		}
	}
	return f
}

func inClass(n *node) bool {
	for p := n.parent; p != nil; p = p.parent {
		if p.typ == "class_definition" {
			return true
		}
	}
	return false
}

func (fc *fileCtx) paramNames(c *node) []*node {
	if fc.spec.idents[c.typ] {
		return []*node{c}
	}
	var out []*node
	for _, fld := range []string{"name", "pattern", "left"} {
		for _, k := range c.childrenByField(fld) {
			if fc.spec.idents[k.typ] {
				out = append(out, k)
			} else if id := fc.firstIdent(k); id != nil {
				out = append(out, id)
			}
		}
	}
	if len(out) == 0 {
		if id := fc.firstIdent(c); id != nil {
			out = append(out, id)
		}
	}
	return out
}

func (fc *fileCtx) firstIdent(n *node) *node {
	if fc.spec.idents[n.typ] {
		return n
	}
	for _, c := range n.children {
		if id := fc.firstIdent(c); id != nil {
			return id
		}
	}
	return nil
}

func (fc *fileCtx) analyze(f *funcInfo) {
	fc.cur = f
	fc.env = map[string]taint{}
	if f.outer != nil && f.outer.finalEnv != nil {
		for k, v := range f.outer.finalEnv {
			fc.env[k] = v
		}
	}
	for i, p := range f.params {
		name := fc.text(p)
		t := taint{bits: 1 << uint(i+1), path: push(nil, p.row+1, "parameter "+name)}
		if ps := p.parent; ps != nil {
			ptext := fc.text(ps)
			if len(ptext) > 300 {
				ptext = ptext[:300]
			}
			if ps == f.node.child("parameters") {
				ptext = fc.text(p)
			}
			for _, s := range fc.rs.paramSources {
				if s.re.MatchString(ptext) {
					t = union(taint{bits: srcBit, san: s.clean, path: push(nil, p.row+1, "source: parameter "+name)}, t)
					t.bits |= srcBit
				}
			}
		}
		fc.env[name] = t
	}
	before := f.ret
	nps := len(f.paramSinks)
	if f.body == f.node && f.node != fc.root {
		// expression-bodied function (arrow function, lambda)
		f.ret = union(f.ret, fc.eval(f.body))
	} else {
		fc.walk(f.body)
		if f.body != fc.root && !blockLike(f.body.typ) && fc.spec != pythonSpec {
			f.ret = union(f.ret, fc.eval(f.body))
		}
		if fc.spec.implicitReturn && f.body != fc.root {
			fc.implicitReturn(f)
		}
	}
	if f.ret.bits != before.bits || f.ret.san != before.san || f.ret.psan != before.psan || len(f.paramSinks) != nps {
		fc.changed = true
	}
	if hasNested(f, fc.all) {
		f.finalEnv = fc.env
	}
}

// blockLike reports whether a function body node is a statement list rather
// than an expression.
func blockLike(typ string) bool {
	return strings.Contains(typ, "block") || typ == "compound_statement" || typ == "body_statement" || typ == "do"
}

// implicitReturn adds the value of the last statement of f's body to its
// return value, for languages where a body evaluates to its last expression.
func (fc *fileCtx) implicitReturn(f *funcInfo) {
	last := f.body
	for blockLike(last.typ) {
		var next *node
		for i := len(last.children) - 1; i >= 0; i-- {
			if c := last.children[i]; !fc.spec.comments[c.typ] {
				next = c
				break
			}
		}
		if next == nil {
			return
		}
		last = next
	}
	if fc.spec.returns[last.typ] {
		return // already counted by walk
	}
	t := fc.eval(last)
	if !t.empty() {
		t.path = push(t.path, last.row+1, "return "+fc.norm(last, 50))
		fc.cur.ret = union(fc.cur.ret, t)
		fc.checkReturnSink(last, t)
	}
}

func hasNested(f *funcInfo, all []*funcInfo) bool {
	for _, g := range all {
		if g.outer == f {
			return true
		}
	}
	return false
}

// walk visits statements in source order, binding assignments and checking
// sinks.
func (fc *fileCtx) walk(n *node) {
	fc.tick()
	if n != fc.cur.node && n != fc.cur.body && fc.spec.funcs[n.typ] {
		return
	}
	if fc.spec.comments[n.typ] {
		return
	}
	if as, ok := fc.spec.assigns[n.typ]; ok {
		rhs := n.childrenByField(as.rhs)
		lhs := n.childrenByField(as.lhs)
		if len(rhs) == 0 || len(lhs) == 0 {
			fc.walkChildren(n)
			return
		}
		var t taint
		for _, r := range rhs {
			fc.walk(r)
			t = union(t, fc.eval(r))
		}
		for _, l := range lhs {
			if !fc.spec.idents[l.typ] {
				fc.walk(l)
			}
		}
		if strings.HasPrefix(n.typ, "augmented") || n.typ == "operator_assignment" {
			for _, l := range lhs {
				t = union(t, fc.eval(l))
			}
		}
		if !t.empty() {
			t.path = push(t.path, n.row+1, fc.norm(n, 60))
		}
		for _, l := range lhs {
			fc.checkAssignSink(l, t, n)
			fc.bind(l, t)
		}
		return
	}
	if ls, ok := fc.spec.loops[n.typ]; ok {
		rhs, lhs := fc.part(n, ls.rhs), fc.part(n, ls.lhs)
		if rhs != nil && lhs != nil {
			fc.walk(rhs)
			fc.bind(lhs, fc.eval(rhs))
		}
		for _, c := range n.children {
			if c != rhs && c != lhs {
				fc.walk(c)
			}
		}
		return
	}
	if fc.isCall(n) {
		if b := n.child("block"); b != nil && fc.spec.implicitReturn {
			// Ruby block: its parameters iterate over the receiver and arguments
			if ps := b.child("parameters"); ps != nil {
				t := fc.evalArgsOf(n)
				if r := fc.receiver(n); r != nil {
					t = union(t, fc.eval(r))
				}
				fc.bind(ps, t)
			}
		}
		fc.walkChildren(n)
		fc.checkCall(n)
		return
	}
	if fc.spec.returns[n.typ] {
		fc.walkChildren(n)
		var t taint
		for _, c := range n.children {
			t = union(t, fc.eval(c))
		}
		if !t.empty() {
			t.path = push(t.path, n.row+1, fc.norm(n, 50))
			fc.cur.ret = union(fc.cur.ret, t)
			fc.checkReturnSink(n, t)
		}
		return
	}
	fc.walkChildren(n)
}

func (fc *fileCtx) walkChildren(n *node) {
	for _, c := range n.children {
		fc.walk(c)
	}
}

func (fc *fileCtx) bind(l *node, t taint) {
	switch {
	case fc.spec.idents[l.typ]:
		fc.env[fc.text(l)] = t
	case l.typ == "subscript" || l.typ == "subscript_expression" || l.typ == "index_expression" || l.typ == "array_access" || l.typ == "element_reference":
		if len(l.children) > 0 {
			base := l.children[0]
			key := fc.norm(base, 200)
			fc.env[key] = union(fc.env[key], t)
		}
	case memberTypes[l.typ] || fc.isMethod(l):
		fc.env[fc.norm(l, 200)] = t
	default:
		for _, c := range l.children {
			fc.bind(c, t)
		}
	}
}

func (fc *fileCtx) isSourceCandidate(n *node) bool {
	if fc.isCall(n) {
		return true
	}
	return memberTypes[n.typ] || fc.spec.idents[n.typ]
}

func (fc *fileCtx) sourceTaint(n *node) (taint, bool) {
	if len(fc.rs.sources) == 0 || !fc.isSourceCandidate(n) {
		return taint{}, false
	}
	text := fc.norm(n, 300)
	for _, s := range fc.rs.sources {
		if s.re.MatchString(text) {
			return taint{bits: srcBit, san: s.clean, path: push(nil, n.row+1, "source: "+fc.norm(n, 60))}, true
		}
	}
	return taint{}, false
}

// eval computes the taint of an expression under the current environment.
func (fc *fileCtx) eval(n *node) taint {
	fc.tick()
	if fc.spec.funcs[n.typ] || fc.spec.comments[n.typ] {
		return taint{}
	}
	if t, ok := fc.sourceTaint(n); ok {
		return t
	}
	switch {
	case fc.spec.idents[n.typ]:
		return fc.env[fc.text(n)]
	case memberTypes[n.typ] || fc.isMethod(n):
		if t, ok := fc.env[fc.norm(n, 200)]; ok {
			return t
		}
	}
	if fc.isCall(n) {
		return fc.evalCall(n)
	}
	if fc.spec.kwargs[n.typ] {
		if v := n.child("value"); v != nil {
			return fc.eval(v)
		}
	}
	var t taint
	for _, c := range n.children {
		if n.typ == "pair" && c.field == "key" {
			continue
		}
		t = union(t, fc.eval(c))
	}
	return t
}

// isCall reports whether n is a call of any kind: a plain call, a method call
// on a receiver or a statement that acts as one.
func (fc *fileCtx) isCall(n *node) bool {
	if _, ok := fc.spec.calls[n.typ]; ok {
		return true
	}
	if _, ok := fc.spec.methods[n.typ]; ok {
		return true
	}
	_, ok := fc.spec.keywords[n.typ]
	return ok
}

func (fc *fileCtx) isMethod(n *node) bool {
	_, ok := fc.spec.methods[n.typ]
	return ok
}

// part returns the child of n named by a field ("name"), by its type
// ("#type") or by its position among the children without a field ("@N").
func (fc *fileCtx) part(n *node, f string) *node {
	switch {
	case f == "":
		return nil
	case f[0] == '#':
		for _, c := range n.children {
			if c.typ == f[1:] {
				return c
			}
		}
		return nil
	case f[0] == '@':
		i := int(f[1] - '0')
		for _, c := range n.children {
			if c.field == "" && !fc.spec.comments[c.typ] {
				if i == 0 {
					return c
				}
				i--
			}
		}
		return nil
	}
	return n.child(f)
}

func (fc *fileCtx) callee(n *node) string {
	if m, ok := fc.spec.methods[n.typ]; ok {
		name := n.child(m.name)
		if name == nil {
			return ""
		}
		if obj := n.child(m.recv); obj != nil {
			return fc.norm(obj, 200) + m.sep + fc.text(name)
		}
		return fc.text(name)
	}
	if kw, ok := fc.spec.keywords[n.typ]; ok {
		if strings.HasPrefix(kw, "@") {
			if t := n.child(kw[1:]); t != nil {
				return "(" + fc.norm(t, 50) + ")"
			}
			return ""
		}
		return kw
	}
	if c := fc.part(n, fc.spec.calls[n.typ][0]); c != nil {
		return fc.norm(c, 200)
	}
	return ""
}

func (fc *fileCtx) receiver(n *node) *node {
	if m, ok := fc.spec.methods[n.typ]; ok {
		return n.child(m.recv)
	}
	if _, ok := fc.spec.keywords[n.typ]; ok {
		return nil
	}
	return fc.part(n, fc.spec.calls[n.typ][0])
}

// argsNode returns the node holding the arguments of a call (the statement
// itself for keyword calls).
func (fc *fileCtx) argsNode(n *node) *node {
	if m, ok := fc.spec.methods[n.typ]; ok {
		return n.child(m.args)
	}
	if _, ok := fc.spec.keywords[n.typ]; ok {
		return n
	}
	return fc.part(n, fc.spec.calls[n.typ][1])
}

func (fc *fileCtx) evalArgsOf(n *node) taint {
	_, all := fc.args(n)
	return fc.evalArgs(all)
}

func (fc *fileCtx) args(n *node) (pos []*node, all []*node) {
	a := fc.argsNode(n)
	if a == nil {
		return nil, nil
	}
	_, kw := fc.spec.keywords[n.typ]
	for _, c := range a.children {
		if fc.spec.comments[c.typ] || (kw && c.field == "type") {
			continue
		}
		all = append(all, c)
		if !fc.spec.kwargs[c.typ] {
			pos = append(pos, c)
		}
	}
	return pos, all
}

func (fc *fileCtx) lookupFunc(callee string) *funcInfo {
	for _, s := range fc.spec.selfs {
		callee = strings.TrimPrefix(callee, s)
	}
	if f, ok := fc.funcs[callee]; ok {
		return f
	}
	if fc.spec == goSpec {
		if i := strings.LastIndexByte(callee, '.'); i >= 0 && !strings.ContainsAny(callee[:i], "()") {
			return fc.methods[callee[i+1:]]
		}
	}
	return nil
}

func (fc *fileCtx) evalArgs(all []*node) taint {
	var t taint
	for _, a := range all {
		t = union(t, fc.eval(a))
	}
	return t
}

func (fc *fileCtx) evalCall(n *node) taint {
	callee := fc.callee(n)
	_, all := fc.args(n)
	for _, s := range fc.rs.sanitizers {
		if s.re.MatchString(callee) {
			if s.mask == ^uint32(0) {
				return taint{}
			}
			t := fc.evalArgs(all)
			if r := fc.receiver(n); r != nil && fc.isMethod(n) {
				t = union(t, fc.eval(r))
			}
			t.san |= s.mask
			t.psan |= s.mask
			return t
		}
	}
	if f := fc.lookupFunc(callee); f != nil && f != fc.cur {
		pos, _ := fc.args(n)
		var r taint
		if f.ret.bits&srcBit != 0 {
			r = taint{bits: srcBit, san: f.ret.san, path: push(f.ret.path, n.row+1, "call "+callee)}
		}
		for i := range pos {
			if i < 62 && f.ret.bits&(1<<uint(i+1)) != 0 {
				a := fc.eval(pos[i])
				if !a.empty() {
					a.san |= f.ret.psan
					a.psan |= f.ret.psan
					a.path = push(a.path, n.row+1, "through "+callee+"()")
					r = union(r, a)
				}
			}
		}
		return r
	}
	t := fc.evalArgs(all)
	if r := fc.receiver(n); r != nil {
		if fc.isMethod(n) || memberTypes[r.typ] || n.typ == "call" || n.typ == "call_expression" {
			if !fc.spec.idents[r.typ] || fc.isMethod(n) {
				t = union(t, fc.eval(r))
			}
		}
	}
	return t
}

func (fc *fileCtx) sinksFor(callee string) []sinkMatch {
	key := fc.spec.name + "\x00" + callee
	if m, ok := fc.w.sinks[key]; ok {
		return m
	}
	var out []sinkMatch
	for _, r := range fc.rs.taint {
		for _, sk := range r.Sinks {
			if sk.callee != nil && sk.callee.MatchString(callee) {
				out = append(out, sinkMatch{r, sk})
			}
		}
	}
	if len(fc.w.sinks) > 50_000 {
		fc.w.sinks = map[string][]sinkMatch{}
	}
	fc.w.sinks[key] = out
	return out
}

func (fc *fileCtx) checkCall(n *node) {
	callee := fc.callee(n)
	if callee == "" {
		return
	}
	pos, all := fc.args(n)
	for _, m := range fc.sinksFor(callee) {
		sk := m.sink
		if sk.argRe != nil || sk.notArgRe != nil {
			an := fc.argsNode(n)
			at := ""
			if an != nil {
				at = fc.norm(an, 2000)
			}
			if sk.argRe != nil && !sk.argRe.MatchString(at) {
				continue
			}
			if sk.notArgRe != nil && sk.notArgRe.MatchString(at) {
				continue
			}
		}
		var t taint
		if len(sk.Args) == 0 {
			t = fc.evalArgs(all)
		} else {
			for _, i := range sk.Args {
				if i < 0 {
					i = len(pos) + i
				}
				if i >= 0 && i < len(pos) {
					t = union(t, fc.eval(pos[i]))
				}
			}
		}
		if sk.Receiver {
			if r := fc.receiver(n); r != nil {
				t = union(t, fc.eval(r))
			}
		}
		fc.report(m.rule, n, t, fc.cur)
	}
	for _, p := range fc.rs.propagators {
		if p.re.MatchString(callee) {
			t := fc.evalArgs(all)
			if r := fc.receiver(n); !t.empty() && r != nil {
				obj := r
				if !fc.isMethod(n) && len(r.children) > 0 && memberTypes[r.typ] {
					obj = r.children[0]
				}
				t.path = push(t.path, n.row+1, fc.norm(n, 60))
				fc.bind(obj, union(fc.eval(obj), t))
			}
		}
	}
	if f := fc.lookupFunc(callee); f != nil && f != fc.cur && len(f.paramSinks) > 0 {
		for _, ps := range f.paramSinks {
			if ps.param >= len(pos) {
				continue
			}
			a := fc.eval(pos[ps.param])
			if a.empty() {
				continue
			}
			a.san |= ps.san
			a.psan |= ps.san
			a.path = push(a.path, n.row+1, "call "+callee+"()")
			for _, s := range ps.path.list() {
				a.path = push(a.path, s.line, s.label)
			}
			fc.report(ps.rule, ps.sink, a, ps.fn)
		}
	}
}

func (fc *fileCtx) checkAssignSink(l *node, t taint, at *node) {
	if t.empty() {
		return
	}
	lt := ""
	for _, r := range fc.rs.taint {
		for _, sk := range r.Sinks {
			if sk.lhsRe == nil {
				continue
			}
			if lt == "" {
				lt = fc.norm(l, 200)
			}
			if sk.lhsRe.MatchString(lt) {
				fc.report(r, at, t, fc.cur)
			}
		}
	}
}

func (fc *fileCtx) checkReturnSink(n *node, t taint) {
	for _, r := range fc.rs.taint {
		for _, sk := range r.Sinks {
			if sk.Return && (sk.funcRe == nil || sk.funcRe.MatchString(fc.cur.header)) {
				if sk.argRe != nil || sk.notArgRe != nil {
					rt := fc.norm(n, 2000)
					if (sk.argRe != nil && !sk.argRe.MatchString(rt)) || (sk.notArgRe != nil && sk.notArgRe.MatchString(rt)) {
						continue
					}
				}
				fc.report(r, n, t, fc.cur)
			}
		}
	}
}

// report records a finding when t carries source data into a sink of rule r,
// and a parameter summary when it carries a parameter of the current function.
func (fc *fileCtx) report(r *ruleSpec, sink *node, t taint, fn *funcInfo) {
	if t.empty() {
		return
	}
	if t.bits&srcBit != 0 && t.san&r.classBit == 0 {
		key := fmt.Sprintf("%s@%d", r.ID, sink.start)
		if fc.seen[key] {
			return
		}
		fc.seen[key] = true
		path := t.path
		if path == nil || path.line != sink.row+1 || !strings.HasPrefix(path.label, "sink: ") {
			path = push(path, sink.row+1, "sink: "+fc.norm(sink, 60))
		}
		fc.emit(r, sink, fn, mermaid(fc.file, path))
	}
	if t.psan&r.classBit != 0 {
		return
	}
	for b := t.bits &^ srcBit; b != 0; b &= b - 1 {
		i := bits.TrailingZeros64(b) - 1
		dup := false
		for _, ps := range fc.cur.paramSinks {
			if ps.param == i && ps.rule == r && ps.sink == sink {
				dup = true
				break
			}
		}
		if !dup {
			fc.cur.paramSinks = append(fc.cur.paramSinks, paramSink{param: i, rule: r, san: t.psan, sink: sink,
				path: push(t.path, sink.row+1, "sink: "+fc.norm(sink, 60)), fn: fn})
		}
	}
}

func (fc *fileCtx) emit(r *ruleSpec, n *node, fn *funcInfo, trace *string) {
	if fc.lines == nil {
		fc.lines = strings.Split(string(fc.src), "\n")
	}
	endRow := n.endRow
	if endRow-n.row > 10 {
		endRow = n.row + 10
	}
	fname := ""
	if fn != nil {
		fname = fn.name
	}
	if fname == "" {
		fname = enclosingName(fc, n)
	}
	sinkText := finding.NormalizeCode(fc.text(n))
	if len(sinkText) > 300 {
		sinkText = sinkText[:300]
	}
	fc.findings = append(fc.findings, finding.Finding{
		RuleID:         r.ID,
		Title:          r.Title,
		Category:       r.Category,
		Severity:       r.Severity,
		Description:    strings.TrimSpace(r.Description),
		AffectedFile:   fc.file,
		AffectedCode:   snippetLines(fc.lines, n.row, endRow, 2),
		Tags:           []string{r.ID, r.CWE, r.OWASP, fc.spec.name},
		MermaidTrace:   trace,
		StartLine:      n.row + 1,
		EndLine:        endRow + 1,
		Language:       fc.spec.name,
		FingerprintKey: fname + "|" + sinkText,
	})
}

func enclosingName(fc *fileCtx, n *node) string {
	for p := n.parent; p != nil; p = p.parent {
		if fc.spec.funcs[p.typ] {
			if nm := p.child("name"); nm != nil {
				return fc.text(nm)
			}
		}
	}
	return "<module>"
}

func snippetLines(lines []string, from, to, ctxLines int) string {
	lo := max(from-ctxLines, 0)
	hi := min(to+ctxLines, len(lines)-1)
	var b strings.Builder
	for i := lo; i <= hi; i++ {
		l := strings.TrimRight(lines[i], "\r")
		if len(l) > 300 {
			l = l[:300] + "…"
		}
		b.WriteString(l)
		if i < hi {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// mermaid renders a taint path as a Mermaid flowchart, one node per hop.
func mermaid(file string, last *step) *string {
	steps := last.list()
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	for i, s := range steps {
		fmt.Fprintf(&b, "  n%d[\"%s<br/>%s:%d\"]\n", i, mermaidEscape(s.label), mermaidEscape(file), s.line)
	}
	for i := 1; i < len(steps); i++ {
		fmt.Fprintf(&b, "  n%d --> n%d\n", i-1, i)
	}
	out := b.String()
	return &out
}

func mermaidEscape(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	r := strings.NewReplacer("\"", "#quot;", "<", "#lt;", ">", "#gt;", "\n", " ", "\r", " ", "`", "#96;")
	return r.Replace(s)
}

// patterns runs the structural (non-taint) rules over every node.
func (fc *fileCtx) patterns(n *node) {
	fc.tick()
	if rules := fc.rs.patterns[n.typ]; len(rules) > 0 {
		for _, r := range rules {
			if fc.matchPattern(r.Pattern, n) {
				key := fmt.Sprintf("%s@%d", r.ID, n.start)
				if !fc.seen[key] {
					fc.seen[key] = true
					fc.emit(r, n, nil, nil)
				}
			}
		}
	}
	for _, c := range n.children {
		fc.patterns(c)
	}
}

func (fc *fileCtx) matchPattern(p *patternSpec, n *node) bool {
	if p.callee != nil {
		if !fc.isCall(n) || !p.callee.MatchString(fc.callee(n)) {
			return false
		}
	}
	if len(p.res) > 0 || p.notRe != nil {
		text := fc.norm(n, 2000)
		for _, re := range p.res {
			if !re.MatchString(text) {
				return false
			}
		}
		if p.notRe != nil && p.notRe.MatchString(text) {
			return false
		}
	}
	if p.lineRe != nil {
		if fc.lines == nil {
			fc.lines = strings.Split(string(fc.src), "\n")
		}
		if n.row >= len(fc.lines) || !p.lineRe.MatchString(fc.lines[n.row]) {
			return false
		}
	}
	if p.pathRe != nil && !p.pathRe.MatchString(fc.file) {
		return false
	}
	if p.fileRe != nil && !p.fileRe.Match(fc.src) {
		return false
	}
	if p.fileNotRe != nil && p.fileNotRe.Match(fc.src) {
		return false
	}
	return true
}
