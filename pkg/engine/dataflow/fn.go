package dataflow

import (
	"sort"
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/model"
)

var (
	allClasses, _ = model.Mask(nil)
	optIn         = ^allClasses // classes only named sources taint (weak randomness)
)

type objKey struct {
	in  *ir.Instr
	sym int32
}

// fnCtx analyses one function: a forward dataflow over its control-flow
// graph to a fixpoint, with states joined where paths meet.
type fnCtx struct {
	a      *analyzer
	fn     *ir.Func
	file   *ir.File
	lm     *langModels
	in     []*state
	visits []int
	objIDs map[objKey]int32
	sum    *summary
	ret    Val
	rets   []Val // the later results of a function returning several (Go)
	exit   *state
	// later holds the later results of the call being evaluated, and
	// results those of the calls made, by the variable of their first
	// result (read by OpLoadField "#1"…).
	later   []Val
	results map[ir.VarID][]Val
	steps   int
	over    bool
	names   map[string]ir.VarID
	// slot maps a variable to its index in a state, or -1 for a variable
	// whose every use follows its definition inside one block (most
	// temporaries): those live in locals, not in the states copied and
	// joined between blocks.
	slot   []int32
	locals []Val
	// thrown joins the values thrown inside the function: a catch handler
	// binds them.
	thrown Val
	// guards maps a condition variable of the current block to what its
	// truth says of another variable.
	guards map[ir.VarID]guard
	// stopped: the last call never returns (abort, exit): the path ends.
	stopped bool
	// spare holds states no block will read again; their arrays are reused
	// by the next copy instead of allocating.
	spare []*state
}

// copyState returns a copy of s, reusing a spare state's arrays.
func (c *fnCtx) copyState(s *state) *state {
	n := len(c.spare)
	if n == 0 {
		return s.copy()
	}
	d := c.spare[n-1]
	c.spare = c.spare[:n-1]
	d.vars = append(d.vars[:0], s.vars...)
	clear(d.objs)
	d.objs = append(d.objs[:0], s.objs...)
	return d
}

// release gives back a state that no block reads again. Only its own arrays
// are reused; the values and objects they held, which other states may
// share, are left alone.
func (c *fnCtx) release(s *state) {
	c.spare = append(c.spare, s)
}

// guard is what a true condition establishes: v is clean of mask (a check
// such as is_numeric or an allow-list lookup), or v equals eq.
type guard struct {
	v    ir.VarID
	mask uint32
	eq   *ir.Const
	neg  bool // the guard holds when the condition is false
}

// noteGuard records the guard an instruction's result expresses.
func (c *fnCtx) noteGuard(st *state, in *ir.Instr) {
	if in.Dst < 0 {
		return
	}
	delete(c.guards, in.Dst)
	switch in.Op {
	case ir.OpUnary:
		if (in.Name == "!" || in.Name == "not") && in.Args[0].IsVar() {
			if g, ok := c.guards[in.Args[0].Var]; ok {
				g.neg = !g.neg
				c.guards[in.Dst] = g
			}
		}
	case ir.OpAssign:
		if in.Args[0].IsVar() {
			if g, ok := c.guards[in.Args[0].Var]; ok {
				c.guards[in.Dst] = g
			}
		}
	case ir.OpBinary:
		x, y := in.Args[0], in.Args[1]
		if x.IsConst() {
			x, y = y, x
		}
		if !x.IsVar() {
			return
		}
		k := c.val(st, y).Const
		switch in.Name {
		case "==", "===", "is":
			if k != nil {
				c.guards[in.Dst] = guard{v: x.Var, eq: k}
			}
		case "!=", "!==", "is not":
			if k != nil {
				c.guards[in.Dst] = guard{v: x.Var, eq: k, neg: true}
			}
		case "in", "not in":
			if in.Args[0].IsVar() && c.allConstant(st, c.val(st, in.Args[1])) {
				c.guards[in.Dst] = guard{v: in.Args[0].Var, mask: allClasses, neg: in.Name == "not in"}
			}
		}
	case ir.OpCall:
		call := in.Call
		recvType := ""
		recv := Val{}
		if !call.Recv.IsNone() {
			recv = c.val(st, call.Recv)
			recvType = recv.Type
		}
		for _, e := range c.a.lookupCall(c.lm, call, recvType) {
			switch {
			case e.sanitizer != nil && e.sanitizer.Guard:
				op := call.Recv
				if i := e.sanitizer.Arg; i >= 0 {
					if i >= len(call.Args) {
						continue
					}
					op = call.Args[i]
				}
				if op.IsVar() {
					c.guards[in.Dst] = guard{v: op.Var, mask: e.sanMask}
				}
			case e.eval != nil && (e.eval.Fn == "equals" || e.eval.Fn == "equals_ignore_case") && len(call.Args) == 1:
				a, b := call.Recv, call.Args[0]
				if a.IsConst() || c.val(st, a).Const != nil {
					a, b = b, a
				}
				if k := c.val(st, b).Const; k != nil && a.IsVar() && e.eval.Fn == "equals" {
					c.guards[in.Dst] = guard{v: a.Var, eq: k}
				} else if k != nil && a.IsVar() {
					c.guards[in.Dst] = guard{v: a.Var, mask: allClasses}
				}
			}
		}
		if call.Name == "contains" || call.Name == "includes" || call.Name == "has" || call.Name == "containsKey" || call.Name == "in_array" {
			// membership in a collection of constants is an allow-list check
			coll, item := recv, ir.None
			if len(call.Args) == 1 {
				item = call.Args[0]
			} else if len(call.Args) == 2 && call.Recv.IsNone() {
				item, coll = call.Args[0], c.val(st, call.Args[1])
			}
			if item.IsVar() && c.allConstant(st, coll) {
				c.guards[in.Dst] = guard{v: item.Var, mask: allClasses}
			}
		}
	}
}

// allConstant reports a locally built collection holding only constants.
func (c *fnCtx) allConstant(st *state, v Val) bool {
	if len(v.Objs) == 0 || len(v.Taint) > 0 {
		return false
	}
	for _, id := range v.Objs {
		o := st.objs[id]
		if o == nil || !o.Exact || o.Any.Def {
			return false
		}
		for _, e := range o.List {
			if e.Const == nil {
				return false
			}
		}
		for k, f := range o.Fields {
			if f.Const == nil && !strings.HasPrefix(k, "@") {
				return false
			}
		}
	}
	return true
}

// refine applies a guard to the state of the branch where it holds.
func (c *fnCtx) refine(st *state, g guard) *state {
	out := c.copyState(st)
	v := c.get(out, g.v)
	if g.eq != nil {
		v = Val{Def: true, Const: g.eq, Type: v.Type}
	} else {
		v.Taint = v.Taint.mask(^g.mask)
	}
	c.put(out, g.v, v)
	return out
}

// assignSlots decides which variables are carried between blocks.
func (c *fnCtx) assignSlots() int {
	fn := c.fn
	sc := &c.a.scratch
	c.slot = resize(sc.slot, len(fn.Vars))
	sc.slot = c.slot
	home := resize(sc.home, len(fn.Vars)) // block of first sight, -2 when carried
	sc.home = home
	for i := range home {
		home[i] = -1
	}
	carried := func(v ir.VarID) { home[v] = -2 }
	for i, v := range fn.Vars {
		if v.Captured {
			carried(ir.VarID(i))
		}
	}
	if fn.This != ir.NoVar {
		carried(fn.This)
	}
	for _, p := range fn.Params {
		carried(p.Var)
	}
	defined := resize(sc.defined, len(fn.Vars))
	sc.defined = defined
	clear(defined)
	touched := sc.touched[:0]
	for _, blk := range fn.Blocks {
		b := int32(blk.ID)
		touched = touched[:0]
		use := func(v ir.Value) {
			if !v.IsVar() || int(v.Var) >= len(home) {
				return
			}
			switch {
			case home[v.Var] == -2:
			case home[v.Var] != b || !defined[v.Var]:
				carried(v.Var)
			}
		}
		for i := range blk.Instrs {
			in := &blk.Instrs[i]
			for _, a := range in.Args {
				use(a)
			}
			if in.Call != nil {
				use(in.Call.Recv)
				for _, a := range in.Call.Args {
					use(a)
				}
			}
			if in.Op == ir.OpStoreField || in.Op == ir.OpStoreIndex {
				// the base object is updated in place: it must persist
				if in.Args[0].IsVar() {
					carried(in.Args[0].Var)
				}
			}
			if d := in.Dst; d >= 0 && int(d) < len(home) {
				switch home[d] {
				case -1:
					home[d] = b
				case b, -2:
				default:
					carried(d)
				}
				if home[d] == b {
					defined[d] = true
					touched = append(touched, d)
				}
			}
		}
		use(blk.Cond)
		use(blk.Val)
		for _, m := range blk.More {
			use(m)
		}
		for _, d := range touched {
			defined[d] = false
		}
	}
	sc.touched = touched
	n := int32(0)
	for i := range c.slot {
		if home[i] == -2 || home[i] == -1 {
			c.slot[i] = n
			n++
		} else {
			c.slot[i] = -1
		}
	}
	c.locals = resize(sc.locals, len(fn.Vars))
	sc.locals = c.locals
	clear(c.locals)
	return int(n)
}

// get reads a variable's value in st.
func (c *fnCtx) get(st *state, v ir.VarID) Val {
	if s := c.slot[v]; s >= 0 {
		return st.vars[s]
	}
	return c.locals[v]
}

// put writes a variable's value in st.
func (c *fnCtx) put(st *state, v ir.VarID, x Val) {
	if s := c.slot[v]; s >= 0 {
		st.vars[s] = x
	} else {
		c.locals[v] = x
	}
}

func (a *analyzer) analyzeFunc(fn *ir.Func) (sum *summary) {
	defer func() {
		// a defect in the analysis of one function must not fail the scan:
		// the function is left without a summary and counted
		if r := recover(); r != nil {
			a.st.Failed++
			sum = &summary{}
		}
	}()
	sc := &a.scratch
	c := &fnCtx{a: a, fn: fn, file: fn.File, lm: a.p.models(fn.File), in: resize(sc.in, len(fn.Blocks)), visits: resize(sc.visits, len(fn.Blocks)),
		objIDs: map[objKey]int32{}, sum: &summary{}, spare: sc.spare}
	sc.in, sc.visits = c.in, c.visits
	clear(c.in)
	clear(c.visits)
	// the states are given back for the next function once this one's
	// summary is made
	defer c.recycle()
	if len(fn.Blocks) == 0 {
		return c.sum
	}
	nslots := c.assignSlots()
	c.in[0] = c.entryState(nslots)
	work := append(sc.work[:0], 0)
	queued := resize(sc.queued, len(fn.Blocks))
	sc.queued = queued
	clear(queued)
	queued[0] = true
	for len(work) > 0 && !c.over {
		// lowest block id first: front ends number blocks roughly in order
		best := 0
		for i := range work {
			if work[i] < work[best] {
				best = i
			}
		}
		b := work[best]
		work[best] = work[len(work)-1]
		work = work[:len(work)-1]
		queued[b] = false
		for _, s := range c.block(b) {
			if !queued[s] {
				queued[s] = true
				work = append(work, s)
			}
		}
	}
	sc.work = work
	if c.over {
		a.st.OverBudget++
	}
	c.finishSummary()
	return c.sum
}

// scratch holds the arrays one function's analysis needs, reused by the
// next function the same analyzer analyses (an analyzer analyses one
// function at a time) instead of allocating them for every function.
type scratch struct {
	slot, home []int32
	defined    []bool
	touched    []ir.VarID
	locals     []Val
	in         []*state
	visits     []int
	queued     []bool
	work       []int
	// spare holds states no function reads again.
	spare []*state
}

// resize returns s with length n, reusing its array when large enough.
// The contents are not cleared.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// recycle gives the function's block states and exit state to the next
// function once the summary is made: a summary holds values, never a
// state, so nothing reads these arrays again. Each state is given once: the
// block entry states are distinct, and the exit state is never one of them
// (it is a block's own working copy).
func (c *fnCtx) recycle() {
	for i, s := range c.in {
		if s != nil {
			c.spare = append(c.spare, s)
			c.in[i] = nil
		}
	}
	if c.exit != nil {
		c.spare = append(c.spare, c.exit)
		c.exit = nil
	}
	c.a.scratch.spare = c.spare
}

func (c *fnCtx) newObj(st *state, key objKey, o *Obj) int32 {
	id, ok := c.objIDs[key]
	if !ok {
		id = int32(len(c.objIDs))
		if id >= 512 { // bound the heap: share one object beyond it
			id = 511
		} else {
			c.objIDs[key] = id
		}
	}
	for int(id) >= len(st.objs) {
		st.objs = append(st.objs, nil)
	}
	st.objs[id] = o
	return id
}

// copyLits replaces the collection literals a value refers to with copies
// allocated at the copying instruction (value semantics); other objects
// stay shared.
func (c *fnCtx) copyLits(st *state, in *ir.Instr, v Val) Val {
	var objs []int32
	for i, id := range v.Objs {
		o := st.objs[id]
		if o == nil || !o.Lit {
			objs = unionObjs(objs, []int32{id})
			continue
		}
		objs = unionObjs(objs, []int32{c.newObj(st, objKey{in: in, sym: int32(i)}, o.clone())})
	}
	v.Objs = objs
	return v
}

func (c *fnCtx) entryState(nslots int) *state {
	fn := c.fn
	st := &state{}
	if n := len(c.spare); n > 0 {
		st = c.spare[n-1]
		c.spare = c.spare[:n-1]
		clear(st.objs)
		st.objs = st.objs[:0]
	}
	st.vars = resize(st.vars, nslots)
	clear(st.vars)
	ep := c.a.entries[fn]
	mk := func(v ir.VarID, src int32, what string) {
		lab := Label{Src: src, Classes: ^uint32(0), Trace: (*Trace)(nil).add(c.file, fn.Pos, what)}
		t := fn.Vars[v].Type
		if isParam(src) {
			t = c.a.paramType(fn, paramIndex(src), t)
		}
		o := &Obj{Sym: Taint{lab}, Class: t, Type: t}
		id := c.newObj(st, objKey{sym: src}, o)
		c.put(st, v, Val{Def: true, Taint: Taint{lab}, Objs: []int32{id}, Type: t})
	}
	if fn.This != ir.NoVar {
		mk(fn.This, labelThis, "receiver of "+fn.Name)
		if th := c.get(st, fn.This); fn.Class != nil && th.Type == "" {
			th.Type = fn.Class.QName
			c.put(st, fn.This, th)
			st.objs[th.Objs[0]].Class = fn.Class.QName
		}
	}
	for i, p := range fn.Params {
		name := fn.Vars[p.Var].Name
		mk(p.Var, labelParam(i), "parameter "+name+" of "+fn.Name)
		if real := c.paramSource(i, p, ep); real != nil {
			v := c.get(st, p.Var)
			v.Taint = v.Taint.union(Taint{*real})
			c.put(st, p.Var, v)
		}
	}
	if env := c.a.closures[fn]; env != nil {
		for i, v := range fn.Vars {
			if v.Captured {
				if val, ok := env[v.Name]; ok {
					c.put(st, ir.VarID(i), val)
				}
			}
		}
	}
	return st
}

// paramSource returns the real taint a parameter carries: an entry point's
// request parameter, or a parameter a source model selects.
func (c *fnCtx) paramSource(i int, p ir.Param, ep *entryInfo) *Label {
	v := c.fn.Vars[p.Var]
	label := func(kind, what string, m uint32) *Label {
		return &Label{Src: realSrc(m), Classes: m, Trace: (*Trace)(nil).add(c.file, c.fn.Pos, kind+" input: "+what)}
	}
	for _, a := range p.Annotations {
		for _, e := range c.lm.paramAnn {
			if annotationMatches(a.Name, e.name) {
				return label(e.source.Kind, "request parameter "+v.Name+" (@"+a.Name+")", e.srcMask)
			}
		}
	}
	if v.Type != "" && len(c.lm.paramTypes) > 0 {
		for _, s := range c.a.p.supers(c.lm, c.lm.alias(v.Type)) {
			for _, e := range c.lm.paramTypes {
				if e.name == s {
					return label(e.source.Kind, "parameter "+v.Name+" of type "+v.Type, e.srcMask)
				}
			}
		}
	}
	for _, e := range c.lm.paramNames {
		if e.name == v.Name {
			return label(e.source.Kind, "parameter "+v.Name+" of "+c.fn.Name, e.srcMask)
		}
	}
	if ep != nil && paramSelected(ep.ep, i, p) {
		name := ep.ep.Name
		if name == "" {
			name = "entry point"
		}
		return label("remote", "parameter "+v.Name+" of "+name+" handler "+c.fn.Name, allClasses)
	}
	return nil
}

func paramSelected(ep *model.EntryPoint, i int, p ir.Param) bool {
	if len(ep.Params) == 0 {
		return true
	}
	for _, s := range ep.Params {
		switch {
		case s == "all":
			return true
		case s == "none":
			return false
		case s == itoa(i):
			return true
		default:
			for _, a := range p.Annotations {
				if annotationMatches(a.Name, s) {
					return true
				}
			}
		}
	}
	return false
}

func itoa(i int) string {
	if i >= 0 && i < 10 {
		return string(rune('0' + i))
	}
	return ""
}

// block runs one block and returns the successors whose state changed.
func (c *fnCtx) block(b int) []int {
	blk := c.fn.Blocks[b]
	c.visits[b]++
	entry := c.in[b]
	st := c.copyState(entry)
	if c.visits[b] > 6 {
		st.widen(entry)
	}
	if c.guards == nil {
		c.guards = map[ir.VarID]guard{}
	}
	clear(c.guards)
	for i := range blk.Instrs {
		c.steps++
		if c.steps > c.a.cfg.Budget.StepsPerFunc {
			c.over = true
			c.release(st)
			return nil
		}
		in := &blk.Instrs[i]
		c.exec(st, in)
		if c.stopped {
			c.stopped = false
			c.release(st)
			return nil
		}
		if in.Dst >= 0 {
			c.noteGuard(st, in)
		}
	}
	var out []int
	// flow hands s to a successor. The last flow of the block's state gives
	// it away (owned): a successor reached for the first time takes it
	// instead of a copy, and otherwise it is released, as nothing reads the
	// state after that.
	flow := func(to int, s *state, owned bool) {
		switch {
		case to < 0 || to >= len(c.in):
			if owned {
				c.release(s)
			}
		case c.in[to] == nil:
			if !owned {
				s = c.copyState(s)
			}
			c.in[to] = s
			out = append(out, to)
		default:
			if c.in[to].join(s) {
				out = append(out, to)
			}
			if owned {
				c.release(s)
			}
		}
	}
	if len(blk.Handlers) > 0 {
		h := c.copyState(entry)
		h.join(st)
		for i, to := range blk.Handlers {
			flow(to, h, i == len(blk.Handlers)-1)
		}
	}
	switch blk.Term {
	case ir.TermJump:
		flow(blk.Succs[0], st, true)
	case ir.TermIf:
		cond := c.val(st, blk.Cond)
		if cond.Const != nil {
			if t, ok := truthy(cond.Const); ok {
				if t {
					flow(blk.Succs[0], st, true)
				} else {
					flow(blk.Succs[1], st, true)
				}
				break
			}
		}
		if blk.Cond.IsVar() {
			if g, ok := c.guards[blk.Cond.Var]; ok && c.slot[g.v] >= 0 {
				holds, other := blk.Succs[0], blk.Succs[1]
				if g.neg {
					holds, other = other, holds
				}
				flow(holds, c.refine(st, g), true)
				flow(other, st, true)
				break
			}
		}
		flow(blk.Succs[0], st, false)
		flow(blk.Succs[1], st, true)
	case ir.TermReturn:
		if !blk.Val.IsNone() {
			v := c.val(st, blk.Val)
			v.Taint = c.eff(st, v, 3)
			c.ret = joinVal(c.ret, v)
		}
		for i, m := range blk.More {
			v := c.val(st, m)
			v.Taint = c.eff(st, v, 3)
			v.Objs = nil
			if i >= len(c.rets) {
				c.rets = append(c.rets, make([]Val, i+1-len(c.rets))...)
			}
			c.rets[i] = joinVal(c.rets[i], v)
		}
		c.exitJoin(st)
	case ir.TermThrow:
		if !blk.Val.IsNone() {
			v := c.val(st, blk.Val)
			v.Taint = c.eff(st, v, 2)
			if j := joinVal(c.thrown, v); !valEqual(j, c.thrown) {
				c.thrown = j
			}
		}
		for i, to := range blk.Succs {
			flow(to, st, i == len(blk.Succs)-1)
		}
		if len(blk.Succs) == 0 {
			c.exitJoin(st)
		}
	default:
		c.exitJoin(st)
	}
	return out
}

// exitJoin joins the state at a function's exit; the caller's state is not
// read afterwards, so the first one is kept without a copy.
func (c *fnCtx) exitJoin(st *state) {
	if c.exit == nil {
		c.exit = st
	} else {
		c.exit.join(st)
		c.release(st)
	}
}

func (c *fnCtx) val(st *state, v ir.Value) Val {
	switch {
	case v.IsConst():
		return Val{Def: true, Const: v.Const, Type: constType(c.file.Lang, v.Const)}
	case v.IsVar():
		x := c.get(st, v.Var)
		if !x.Def {
			x.Def = true
		}
		if x.Type == "" {
			x.Type = c.fn.Vars[v.Var].Type
		}
		return x
	}
	return Val{}
}

// eff is the taint of a value together with what its objects contain.
func (c *fnCtx) eff(st *state, v Val, depth int) Taint {
	t := v.Taint
	if depth <= 0 {
		return t
	}
	for _, id := range v.Objs {
		if int(id) >= len(st.objs) || st.objs[id] == nil {
			continue
		}
		o := st.objs[id]
		t = t.union(o.Sym)
		t = t.union(c.eff(st, o.Any, depth-1))
		for _, f := range o.Fields {
			t = t.union(c.eff(st, f, depth-1))
		}
		for _, e := range o.List {
			t = t.union(c.eff(st, e, depth-1))
		}
	}
	return t
}

// mutObj returns a private copy of object id in st for writing.
func (c *fnCtx) mutObj(st *state, id int32) *Obj {
	if int(id) >= len(st.objs) || st.objs[id] == nil {
		return nil
	}
	o := st.objs[id].clone()
	st.objs[id] = o
	return o
}

func isNumericType(t string) bool {
	switch strings.TrimPrefix(t, "java.lang.") {
	case "int", "long", "short", "byte", "double", "float", "boolean", "char", "Integer", "Long", "Short", "Byte", "Double", "Float", "Boolean",
		"bool", "int64", "int32", "uint", "uint64", "uint32", "float64", "float32", "number", "Number", "integer":
		return true
	}
	return false
}

func (c *fnCtx) set(st *state, dst ir.VarID, v Val) {
	if dst < 0 || int(dst) >= len(c.slot) {
		return
	}
	v.Def = true
	if v.Type == "" {
		v.Type = c.fn.Vars[dst].Type
	}
	c.put(st, dst, v)
}

func (c *fnCtx) exec(st *state, in *ir.Instr) {
	switch in.Op {
	case ir.OpAssign:
		v := c.val(st, in.Args[0])
		if in.Name == "copy" {
			v = c.copyLits(st, in, v)
		}
		c.set(st, in.Dst, v)
	case ir.OpUnary:
		x := c.val(st, in.Args[0])
		out := Val{Def: true}
		if x.Const != nil {
			out.Const = foldUnary(in.Name, x.Const)
		}
		switch in.Name {
		case "!", "not", "typeof":
		default:
			out.Taint = x.Taint.mask(optIn)
		}
		c.set(st, in.Dst, out)
	case ir.OpBinary:
		c.set(st, in.Dst, c.binary(st, in))
	case ir.OpCall:
		c.later = nil
		v := c.call(st, in)
		c.set(st, in.Dst, v)
		if in.Dst >= 0 && (len(c.later) > 0 || c.results != nil) {
			if c.results == nil {
				c.results = map[ir.VarID][]Val{}
			}
			c.results[in.Dst] = c.later
		}
	case ir.OpLoadField:
		if i, ok := resultIndex(in.Name); ok {
			// a later result of a call: what the callee returns there, or
			// an unknown clean value
			v := Val{Def: true}
			if x := in.Args[0]; x.IsVar() && i <= len(c.results[x.Var]) {
				v = c.results[x.Var][i-1]
			}
			c.set(st, in.Dst, v)
			break
		}
		obj := c.val(st, in.Args[0])
		v := c.loadField(st, obj, in.Name)
		if obj.Type != "" && c.a.p.packages[c.a.p.canon(obj.Type)] {
			// a member of a module used as a value: `from pkg import mod; mod.f`
			v = joinVal(v, c.loadGlobal(&ir.Instr{Op: ir.OpLoadGlobal, Dst: in.Dst, Name: obj.Type + "." + in.Name, Pos: in.Pos}))
		}
		c.set(st, in.Dst, v)
	case ir.OpStoreField:
		c.checkStore(st, c.val(st, in.Args[0]), c.val(st, in.Args[1]), in.Pos)
		c.store(st, in.Args[0], c.val(st, in.Args[0]), in.Name, nil, c.val(st, in.Args[1]))
	case ir.OpLoadIndex:
		c.set(st, in.Dst, c.loadIndex(st, c.val(st, in.Args[0]), in.Args[1]))
	case ir.OpStoreIndex:
		c.checkStore(st, c.val(st, in.Args[0]), c.val(st, in.Args[2]), in.Pos)
		idx := Val{}
		if !in.Args[1].IsNone() {
			idx = c.val(st, in.Args[1])
		}
		key, isKey := "", false
		if idx.Const != nil {
			key, isKey = constKey(idx.Const), true
		}
		if in.Args[1].IsNone() {
			c.store(st, in.Args[0], c.val(st, in.Args[0]), "", &appendIdx, c.val(st, in.Args[2]))
		} else if isKey {
			c.store(st, in.Args[0], c.val(st, in.Args[0]), key, idx.Const, c.val(st, in.Args[2]))
		} else {
			c.store(st, in.Args[0], c.val(st, in.Args[0]), "", &unknownIdx, c.val(st, in.Args[2]))
		}
	case ir.OpLoadGlobal:
		v := c.loadGlobal(in)
		if elems, ok := c.a.constLists[in.Name]; ok && elems != nil {
			// a module-level collection of constants (an allow list)
			o := &Obj{Type: v.Type, ListOK: true, Exact: true}
			for _, k := range elems {
				o.appendElem(Val{Def: true, Const: k})
			}
			v.Objs = []int32{c.newObj(st, objKey{in: in}, o)}
		}
		c.set(st, in.Dst, v)
	case ir.OpStoreGlobal:
		c.storeGlobal(st, in.Name, c.val(st, in.Args[0]))
	case ir.OpMakeList:
		o := &Obj{Type: in.Name, ListOK: true, Exact: true, Lit: true}
		for _, a := range in.Args {
			o.appendElem(c.val(st, a))
		}
		id := c.newObj(st, objKey{in: in}, o)
		c.set(st, in.Dst, Val{Def: true, Objs: []int32{id}, Type: in.Name})
	case ir.OpMakeMap:
		o := &Obj{Type: in.Name, Exact: true, Lit: true}
		for i := 0; i+1 < len(in.Args); i += 2 {
			k := c.val(st, in.Args[i])
			v := c.val(st, in.Args[i+1])
			if k.Const != nil {
				o.setField(constKey(k.Const), v, true)
			} else {
				o.Any = joinVal(o.Any, v)
				o.Any.Taint = o.Any.Taint.union(k.Taint)
			}
		}
		if len(in.Args)%2 == 1 { // a spread or odd element: contents unknown
			o.Any = joinVal(o.Any, c.val(st, in.Args[len(in.Args)-1]))
		}
		id := c.newObj(st, objKey{in: in}, o)
		c.set(st, in.Dst, Val{Def: true, Objs: []int32{id}, Type: in.Name})
	case ir.OpFunc:
		c.closure(st, in.Fn)
		c.set(st, in.Dst, Val{Def: true, Fns: []*ir.Func{in.Fn}})
	case ir.OpCast:
		x := c.val(st, in.Args[0])
		x.Type = in.Name
		if isNumericType(in.Name) {
			x.Taint = x.Taint.mask(optIn)
			x.Objs = nil
		}
		c.set(st, in.Dst, x)
	case ir.OpCatch:
		v := Val{Def: true, Type: in.Name}
		if c.thrown.Def {
			v.Taint, v.Objs = c.thrown.Taint, c.thrown.Objs
		}
		c.set(st, in.Dst, v)
	case ir.OpOpaque:
		out := Val{Def: true}
		for _, a := range in.Args {
			v := c.val(st, a)
			out.Taint = out.Taint.union(c.eff(st, v, 2))
			out.Fns = unionFns(out.Fns, v.Fns)
		}
		c.set(st, in.Dst, out)
	}
}

var (
	appendIdx  = ir.Const{Kind: ir.ConstNull, Str: "append"}
	unknownIdx = ir.Const{Kind: ir.ConstNull, Str: "unknown"}
)

func constKey(k *ir.Const) string {
	if k.Kind == ir.ConstStr {
		return k.Str
	}
	return "#" + constString(k)
}

func (c *fnCtx) binary(st *state, in *ir.Instr) Val {
	x, y := c.val(st, in.Args[0]), c.val(st, in.Args[1])
	out := Val{Def: true}
	if x.Const != nil && y.Const != nil {
		out.Const = foldBinary(in.Name, x.Const, y.Const)
	}
	switch in.Name {
	case "+", ".", "%", "<<", "+=", "..":
		out.Taint = c.eff(st, x, 2).union(c.eff(st, y, 2))
		if in.Name == "%" && x.Const == nil && !strings.Contains(x.Type, "str") && x.Type != "" {
			out.Taint = out.Taint.mask(optIn)
		}
		if in.Name == "+" && (isNumericType(x.Type) || x.Const != nil && x.Const.IsNumber()) && (isNumericType(y.Type) || y.Const != nil && y.Const.IsNumber()) {
			out.Taint = out.Taint.mask(optIn)
		}
		if out.Const != nil && out.Const.Kind == ir.ConstStr || x.Type == y.Type {
			out.Type = x.Type
		}
	case "??", "||", "&&", "or", "and", "?:":
		// the result is one of the operands (JavaScript, Python, Ruby, PHP)
		if out.Const == nil {
			out = joinVal(x, y)
			out.Const = nil
			if x.Const != nil && (in.Name == "||" || in.Name == "or") {
				if t, ok := truthy(x.Const); ok && t {
					out = x
				}
			}
		}
		if c.file.Lang == "java" || c.file.Lang == "go" {
			out = Val{Def: true, Const: out.Const}
		}
	case "==", "!=", "===", "!==", "<", "<=", ">", ">=", "in", "not in", "is", "is not", "instanceof", "<=>", "=~", "!~":
	default:
		out.Taint = c.eff(st, x, 1).union(c.eff(st, y, 1)).mask(optIn)
	}
	return out
}

func (c *fnCtx) loadField(st *state, base Val, name string) Val {
	out := Val{Def: true, Taint: base.Taint.narrow(name)}
	found := false
	wholeType := "" // the type every store into the field agrees on
	for _, id := range base.Objs {
		if int(id) >= len(st.objs) || st.objs[id] == nil {
			continue
		}
		o := st.objs[id]
		if v, ok := o.Fields[name]; ok {
			if !found {
				t := out.Taint
				out = v
				out.Def = true
				out.Taint = t.union(v.Taint)
			} else {
				out = joinVal(out, v)
				out.Taint = out.Taint.union(v.Taint)
			}
			found = true
		}
		if o.Any.Def {
			out.Taint = out.Taint.union(o.Any.Taint)
			out.Const = nil
		}
		if o.Exact {
			continue
		}
		out.Taint = out.Taint.union(o.Sym.narrow(name))
		v, ok := c.fieldVal(o.Class, name)
		if !ok {
			continue
		}
		wholeType = v.Type
		if c.a.constructed[o.Class] {
			// followed through the receiver's own contents instead
			continue
		}
		out.Taint = out.Taint.union(v.Taint)
		if !found {
			out.Const = v.Const
			out.Type = v.Type
		}
		found = true
	}
	if len(base.Objs) == 0 && base.Type != "" {
		if v, ok := c.fieldVal(base.Type, name); ok {
			out.Taint = out.Taint.union(v.Taint)
			out.Const, out.Type = v.Const, v.Type
			found = true
		}
	}
	if !found {
		out.Const = nil
		out.Type = c.fieldType(base.Type, name)
		if wholeType != "" {
			out.Type = wholeType
		}
		out.Objs = nil
	}
	return out
}

// fieldVal is the flow-insensitive value stored in an instance field by any
// method of the class or its superclasses.
func (c *fnCtx) fieldVal(class, name string) (Val, bool) {
	if class == "" {
		return Val{}, false
	}
	for _, s := range c.a.p.supers(c.lm, class) {
		if v, ok := c.a.fields[s+"."+name]; ok {
			return v, true
		}
	}
	return Val{}, false
}

func (c *fnCtx) fieldType(class, name string) string {
	if cl := c.a.p.classes[class]; cl != nil {
		for _, f := range cl.Fields {
			if f.Name == name {
				return f.Type
			}
		}
	}
	return ""
}

func (c *fnCtx) loadIndex(st *state, base Val, idxV ir.Value) Val {
	out := Val{Def: true, Taint: base.Taint}
	var idx *ir.Const
	if !idxV.IsNone() {
		idx = c.val(st, idxV).Const
	}
	if idx != nil && idx.Kind == ir.ConstStr {
		out.Taint = base.Taint.narrow(constKey(idx))
	}
	for _, id := range base.Objs {
		if int(id) >= len(st.objs) || st.objs[id] == nil {
			continue
		}
		o := st.objs[id]
		switch {
		case idx != nil && idx.Kind == ir.ConstInt && o.ListOK:
			i := int(idx.Int)
			if i < 0 {
				i += len(o.List)
			}
			if i >= 0 && i < len(o.List) {
				out = joinVal(out, o.List[i])
				out.Taint = out.Taint.union(o.List[i].Taint)
			}
			// an index past the known end reads nothing
		case idx != nil && idx.Kind != ir.ConstInt && !o.ListOK || idx != nil && idx.Kind == ir.ConstStr:
			if v, ok := o.Fields[constKey(idx)]; ok {
				out = joinVal(out, v)
				out.Taint = out.Taint.union(v.Taint)
			}
		default:
			for _, v := range o.Fields {
				out.Taint = out.Taint.union(c.eff(st, v, 1))
				out.Objs = unionObjs(out.Objs, v.Objs)
			}
			for _, v := range o.List {
				out.Taint = out.Taint.union(c.eff(st, v, 1))
				out.Objs = unionObjs(out.Objs, v.Objs)
			}
		}
		if o.Any.Def {
			out.Taint = out.Taint.union(c.eff(st, o.Any, 1))
			out.Objs = unionObjs(out.Objs, o.Any.Objs)
		}
		if !o.Exact {
			if idx != nil && idx.Kind == ir.ConstStr {
				out.Taint = out.Taint.union(o.Sym.narrow(constKey(idx)))
			} else {
				out.Taint = out.Taint.union(o.Sym)
			}
		}
	}
	out.Objs = filterObjs(out.Objs, base.Objs)
	out.Const = nil
	if len(base.Objs) == 1 && idx != nil {
		o := st.objs[base.Objs[0]]
		if o != nil {
			if idx.Kind == ir.ConstInt && o.ListOK && int(idx.Int) < len(o.List) && idx.Int >= 0 {
				out.Const = o.List[idx.Int].Const
			} else if v, ok := o.Fields[constKey(idx)]; ok {
				out.Const = v.Const
			}
		}
	}
	out.Type = elemType(base.Type)
	return out
}

// filterObjs drops the container itself from the objects an element may be.
func filterObjs(objs, container []int32) []int32 {
	if len(objs) == 0 {
		return objs
	}
	var out []int32
	for _, o := range objs {
		self := false
		for _, c := range container {
			self = self || c == o
		}
		if !self {
			out = append(out, o)
		}
	}
	return out
}

func elemType(t string) string {
	if strings.HasSuffix(t, "[]") {
		return strings.TrimSuffix(t, "[]")
	}
	return ""
}

// checkStore reports a store of tainted data into a value of a type the
// rules name as a store sink (a session).
func (c *fnCtx) checkStore(st *state, base Val, v Val, pos ir.Pos) {
	if len(c.lm.stores) == 0 || base.Type == "" {
		return
	}
	for _, s := range c.a.p.supers(c.lm, c.lm.alias(base.Type)) {
		for _, e := range c.lm.stores[s] {
			for _, l := range c.eff(st, v, 3) {
				if l.Classes&e.rule.ClassBit == 0 {
					continue
				}
				if isReal(l.Src) {
					c.a.report(&Finding{Rule: e.rule, File: c.file, Func: c.fn, Pos: pos, Kind: "flow", TypedSink: true,
						Steps: append(l.Trace.Steps(), &Trace{File: c.file, Pos: pos, What: "stored into " + base.Type}), Source: sourceKind(l.Trace)})
				} else {
					c.sum.addSink(sumSink{src: l.Src, field: l.Field, classes: l.Classes, rule: e.rule, file: c.file, fn: c.fn, pos: pos, trace: l.Trace, typed: true})
				}
			}
		}
	}
}

// store writes v into base's field name, or at index idx (appendIdx,
// unknownIdx or a constant).
func (c *fnCtx) store(st *state, baseV ir.Value, base Val, name string, idx *ir.Const, v Val) {
	strong := len(base.Objs) == 1
	for _, id := range base.Objs {
		o := c.mutObj(st, id)
		if o == nil {
			continue
		}
		switch {
		case idx == &appendIdx:
			o.appendElem(v)
		case idx == &unknownIdx:
			o.collapse()
			o.Any = joinVal(o.Any, v)
		case idx != nil && idx.Kind == ir.ConstInt && o.ListOK:
			i := int(idx.Int)
			switch {
			case i >= 0 && i < len(o.List):
				if strong {
					o.List[i] = v
				} else {
					o.List[i] = joinVal(o.List[i], v)
				}
			case i == len(o.List):
				o.appendElem(v)
			default:
				o.collapse()
				o.Any = joinVal(o.Any, v)
			}
		default:
			key := name
			if idx != nil {
				key = constKey(idx)
			}
			o.setField(key, v, strong)
		}
		if !o.Exact && name != "" {
			c.storeFieldGlobal(st, o.Class, name, v)
		}
	}
	if len(base.Objs) == 0 && name != "" && base.Type != "" {
		c.storeFieldGlobal(st, base.Type, name, v)
	}
	if len(base.Objs) == 0 && baseV.IsVar() {
		// a value without a modelled object (a library object): it now
		// carries what was stored into it
		cur := c.get(st, baseV.Var)
		cur.Def = true
		cur.Taint = cur.Taint.union(c.eff(st, v, 2))
		c.put(st, baseV.Var, cur)
	}
}

func (c *fnCtx) storeFieldGlobal(st *state, class, name string, v Val) {
	if class == "" {
		return
	}
	key := class + "." + name
	t := c.eff(st, v, 2)
	c.sum.addField(key, t.symbolic())
	nv := Val{Def: true, Taint: t.onlyReal(), Const: v.Const, Type: v.Type}
	c.a.joinField(key, nv)
}

func (a *analyzer) joinField(key string, v Val) {
	old, ok := a.fields[key]
	j := v
	if ok {
		j = joinVal(old, v)
	}
	if !ok || !valEqual(old, j) {
		a.fields[key] = j
		a.changed = true
	}
}

func (c *fnCtx) loadGlobal(in *ir.Instr) Val {
	out := Val{Def: true, Type: c.a.globalType(c.lm, in.Name)}
	if v, ok := c.a.globals[in.Name]; ok {
		out = v
		if out.Type == "" {
			out.Type = c.a.globalType(c.lm, in.Name)
		}
	}
	if k, ok := c.lm.constants[in.Name]; ok {
		out.Const = ir.Str(k)
	}
	for _, e := range c.lm.globals[in.Name] {
		if e.source != nil {
			out.Taint = out.Taint.union(Taint{{Src: realSrc(e.srcMask), Classes: e.srcMask, Trace: (*Trace)(nil).add(c.file, in.Pos, e.source.Kind+" input "+in.Name)}})
		}
	}
	if fs := c.a.p.funcsOf(in.Name); len(fs) > 0 {
		out.Fns = unionFns(out.Fns, fs)
	}
	if out.Type == "" && c.a.p.packages[c.a.p.canon(in.Name)] {
		out.Type = in.Name // a module used as a value
	}
	return out
}

func (c *fnCtx) storeGlobal(st *state, name string, v Val) {
	c.a.noteConstList(name, c.constList(st, v))
	nv := Val{Def: true, Taint: c.eff(st, v, 2).onlyReal(), Const: v.Const, Type: v.Type, Fns: v.Fns}
	old, ok := c.a.globals[name]
	j := nv
	if ok {
		j = joinVal(old, nv)
	}
	if !ok || !valEqual(old, j) {
		c.a.globals[name] = j
		c.a.changed = true
	}
}

// constList returns the elements of a value that is one list of constants
// only, or nil.
func (c *fnCtx) constList(st *state, v Val) []*ir.Const {
	if len(v.Objs) != 1 || len(v.Taint) > 0 {
		return nil
	}
	o := st.objs[v.Objs[0]]
	if o == nil || !o.Exact || !o.ListOK || o.Any.Def || len(o.Fields) > 0 || len(o.List) == 0 {
		return nil
	}
	out := make([]*ir.Const, 0, len(o.List))
	for _, e := range o.List {
		if e.Const == nil {
			return nil
		}
		out = append(out, e.Const)
	}
	return out
}

// closure records the values a closure captures when it is created.
func (c *fnCtx) closure(st *state, fn *ir.Func) {
	if c.names == nil {
		c.names = map[string]ir.VarID{}
		for i, v := range c.fn.Vars {
			if _, ok := c.names[v.Name]; !ok {
				c.names[v.Name] = ir.VarID(i)
			}
		}
	}
	env := c.a.closures[fn]
	for _, v := range fn.Vars {
		if !v.Captured {
			continue
		}
		id, ok := c.names[v.Name]
		if !ok {
			continue
		}
		cur := c.get(st, id)
		if !cur.Def {
			continue
		}
		nv := Val{Def: true, Taint: c.eff(st, cur, 2).onlyReal(), Const: cur.Const, Type: cur.Type, Fns: cur.Fns}
		if env == nil {
			env = map[string]Val{}
			c.a.closures[fn] = env
		}
		old, had := env[v.Name]
		j := nv
		if had {
			j = joinVal(old, nv)
		}
		if !had || !valEqual(old, j) {
			env[v.Name] = j
			c.a.changed = true
		}
	}
}

// resultIndex parses the field name "#i" of a call's later result.
func resultIndex(name string) (int, bool) {
	if len(name) < 2 || name[0] != '#' {
		return 0, false
	}
	i, err := strconv.Atoi(name[1:])
	return i, err == nil && i > 0
}

// finishSummary builds the summary from the function's exits.
func (c *fnCtx) finishSummary() {
	c.sum.ret = c.ret
	c.sum.rets = c.rets
	if c.exit == nil {
		return
	}
	// what the object held on entry is not a change
	fresh := func(t Taint, sym int32) Taint {
		var keep Taint
		for _, l := range t {
			if l.Src != sym {
				keep = append(keep, l)
			}
		}
		return keep
	}
	for key, id := range c.objIDs {
		if key.sym == 0 || int(id) >= len(c.exit.objs) || c.exit.objs[id] == nil {
			continue
		}
		o := c.exit.objs[id]
		var whole Taint
		whole = whole.union(c.eff(c.exit, o.Any, 2))
		for _, e := range o.List {
			whole = whole.union(c.eff(c.exit, e, 2))
		}
		if t := fresh(whole, key.sym); len(t) > 0 {
			c.sum.muts = append(c.sum.muts, sumMut{target: key.sym, taint: t})
		}
		for f, v := range o.Fields {
			if t := fresh(c.eff(c.exit, v, 2), key.sym); len(t) > 0 {
				c.sum.muts = append(c.sum.muts, sumMut{target: key.sym, field: f, taint: t})
			}
		}
	}
	// deterministic order for comparisons
	sort.Slice(c.sum.muts, func(i, j int) bool {
		a, b := c.sum.muts[i], c.sum.muts[j]
		return a.target < b.target || a.target == b.target && a.field < b.field
	})
}
