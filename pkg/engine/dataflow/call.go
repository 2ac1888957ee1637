package dataflow

import (
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
)

// lookupKey identifies what model matching of a call depends on: the
// language, the call's kind and name, and its qualifier (the receiver's
// type, or the static qualifier).
type lookupKey struct {
	lm   *langModels
	kind ir.CallKind
	name string
	qual string
}

// callSite describes a call for model matching.
func (a *analyzer) callSite(lm *langModels, c *ir.Call, recvType string) *callSite {
	cs := &callSite{name: c.Name}
	switch c.Kind {
	case ir.CallMethod:
		if recvType != "" {
			cs.quals = a.p.supers(lm, lm.alias(recvType))
			cs.typeKnown = true
		}
	case ir.CallStatic, ir.CallNew:
		q := lm.alias(c.Qual)
		cs.quals = a.p.supers(lm, q)
		// a qualifier neither the repository nor the models know (a Rails
		// model declared elsewhere) is as good as an unknown receiver type
		cs.typeKnown = q != "" && (a.p.class(q) != nil || lm.known[q])
		if c.Kind == ir.CallNew {
			cs.name = "<init>"
		}
	case ir.CallFunc:
		if c.Qual != "" {
			cs.quals = a.p.supers(lm, lm.alias(c.Qual))
			cs.typeKnown = true
		} else {
			cs.plain = true
		}
	case ir.CallSuper:
		cs.typeKnown = true
	case ir.CallDynamic:
		cs.plain = true
	}
	return cs
}

// lookupCall returns the model and rule entries that match a call, cached
// per call shape so that the hot path neither rebuilds the call site nor
// walks type hierarchies again.
func (a *analyzer) lookupCall(lm *langModels, c *ir.Call, recvType string) []*entry {
	name := c.Name
	if c.Kind == ir.CallNew {
		name = "<init>"
	}
	if len(lm.byName[name]) == 0 && len(lm.byName["*"]) == 0 {
		return nil
	}
	k := lookupKey{lm: lm, kind: c.Kind, name: c.Name, qual: c.Qual}
	if c.Kind == ir.CallMethod {
		k.qual = recvType
	}
	if e, ok := a.lookups[k]; ok {
		return e
	}
	e := lm.lookup(a.callSite(lm, c, recvType))
	a.lookups[k] = e
	return e
}

// call evaluates a call: repository callees through their summaries,
// library calls through the models, and checks the rules' sinks.
func (c *fnCtx) call(st *state, in *ir.Instr) Val {
	call := in.Call
	recv := Val{}
	if !call.Recv.IsNone() {
		recv = c.val(st, call.Recv)
	}
	args := make([]Val, len(call.Args))
	for i, a := range call.Args {
		args[i] = c.val(st, a)
	}
	callees := c.a.p.resolve(c.fn, call, recv)
	if call.Kind == ir.CallMethod {
		callees = c.dispatchObjs(st, call, recv, callees)
	}
	if call.Kind == ir.CallDynamic || call.Kind == ir.CallMethod && len(recv.Fns) > 0 {
		callees = unionFns(callees, recv.Fns)
	}
	if call.Kind == ir.CallFunc && call.Qual == "" && len(callees) == 0 {
		// a call of a local variable holding a function
		for i, v := range c.fn.Vars {
			if x := c.get(st, ir.VarID(i)); v.Name == call.Name && x.Def && len(x.Fns) > 0 {
				callees = x.Fns
				break
			}
		}
	}
	var newObj int32 = -1
	if call.Kind == ir.CallNew {
		newObj = c.newObj(st, objKey{in: in}, &Obj{Type: call.Qual, Class: c.lm.alias(call.Qual)})
		recv = Val{Def: true, Objs: []int32{newObj}, Type: c.lm.alias(call.Qual)}
	}
	var out Val
	if len(callees) > 0 {
		c.a.st.CallsResolved++
		known := false // out stays undefined until a summary joins in, so a constant result survives
		for _, callee := range callees {
			bin, bargs := bindArgs(in, callee, args)
			if len(callees) == 1 {
				c.a.noteArgTypes(callee, bargs)
			}
			s := c.a.sums[callee]
			if s == nil {
				continue
			}
			known = true
			out = joinVal(out, c.applySummary(st, bin, callee, s, recv, bargs))
			for i, r := range s.rets {
				v := Val{Def: true, Const: r.Const, Type: r.Type, Fns: r.Fns, Taint: c.subst(st, r.Taint, callee, recv, bargs, in.Pos)}
				if i >= len(c.later) {
					c.later = append(c.later, v)
				} else {
					c.later[i] = joinVal(c.later[i], v)
				}
			}
		}
		if !known {
			out = c.defaultFlow(st, recv, args)
		}
		out.Def = true
		if newObj >= 0 {
			// the constructed object, whatever the constructor returns
			o := st.objs[newObj]
			return Val{Def: true, Objs: []int32{newObj}, Type: o.Class}
		}
		if call.Kind == ir.CallFunc && out.Type == "" {
			for _, callee := range callees {
				if callee.Name == "<init>" || callee.Name == "__init__" {
					if callee.Class != nil {
						out.Type = callee.Class.QName
					}
				}
			}
		}
		if out.Type == "" {
			for _, callee := range callees {
				if callee.Result != "" {
					out.Type = callee.Result
				}
			}
		}
		return out
	}
	c.a.st.CallsToLibrary++
	if call.Kind == ir.CallDynamic || call.Kind == ir.CallMethod && isCallName(call.Name) {
		// calling a function value the analysis cannot see here (a
		// parameter): the summary records it so that the caller, which
		// knows the closure, applies it
		c.noteParamCall(st, call.Recv, recv, args)
	}
	out = c.library(st, in, recv, args, recv.Type, newObj)
	if r, ok := c.callbacks(st, in, recv, args); ok {
		out.Taint = out.Taint.union(r.Taint)
	}
	return out
}

// dispatchObjs adds the methods a call reaches through the classes of the
// objects the receiver may be, when they differ from its type: `b = c ?
// new A() : new B(); b.run()` reaches A's run and B's.
func (c *fnCtx) dispatchObjs(st *state, call *ir.Call, recv Val, callees []*ir.Func) []*ir.Func {
	if len(recv.Objs) < 2 {
		return callees
	}
	for _, id := range recv.Objs {
		if int(id) >= len(st.objs) || st.objs[id] == nil {
			continue
		}
		cls := st.objs[id].Class
		if cls == "" || cls == recv.Type || c.a.p.class(cls) == nil {
			continue
		}
		r := recv
		r.Type = cls
		callees = unionFns(callees, c.a.p.resolve(c.fn, call, r))
	}
	return callees
}

// bindArgs matches a call's arguments to the callee's parameters when the
// call names some of them (Python and PHP keyword arguments): positional
// arguments fill the leading parameters, the rest go to the variadic one, a
// keyword argument goes to the parameter of that name (else to the
// keyword-collecting one, or the next positional parameter as a Ruby-style
// trailing hash), and an unpacked *x or **x may reach every parameter it
// could fill. It returns the call with its operands in parameter order and
// their values; a parameter no argument binds is left undefined, so the
// callee's own default applies. Calls without keywords are returned as is.
func bindArgs(in *ir.Instr, callee *ir.Func, args []Val) (*ir.Instr, []Val) {
	if !hasKeywords(in.Call.Names) {
		return in, args
	}
	n := len(callee.Params)
	vals := make([]Val, n)
	ops := make([]ir.Value, n)
	for i := range ops {
		ops[i] = ir.None
	}
	bind := func(i int, v Val, op ir.Value) {
		if vals[i].Def {
			vals[i], ops[i] = joinVal(vals[i], v), ir.None
			return
		}
		vals[i], ops[i] = v, op
	}
	restPos, restKw := -1, -1
	for i, p := range callee.Params {
		switch {
		case p.Rest && callee.Vars[p.Var].Type == "dict":
			restKw = i
		case p.Rest && restPos < 0:
			restPos = i
		}
	}
	positional := func(i int) bool { return i < n && i != restPos && i != restKw && (restPos < 0 || i < restPos) }
	next := 0
	var extra, spread Val
	for j, v := range args {
		op := in.Call.Args[j]
		switch name := in.Call.Names[j]; name {
		case "", "&block":
			switch {
			case positional(next):
				bind(next, v, op)
				next++
			case restPos >= 0:
				bind(restPos, v, ir.None)
			}
		case "*", "**":
			spread = joinVal(spread, v)
		default:
			if i := paramNamed(callee, name); i >= 0 {
				bind(i, v, op)
			} else {
				extra = joinVal(extra, v)
			}
		}
	}
	if extra.Def {
		switch {
		case restKw >= 0:
			bind(restKw, extra, ir.None)
		case positional(next):
			bind(next, extra, ir.None)
		}
	}
	if spread.Def {
		for i := range vals {
			if !vals[i].Def || i == restPos || i == restKw {
				bind(i, spread, ir.None)
			}
		}
	}
	syn := *in
	call := *in.Call
	call.Args, call.Names = ops, nil
	syn.Call = &call
	return &syn, vals
}

// hasKeywords reports names of a call that bind by name.
func hasKeywords(names []string) bool {
	for _, n := range names {
		if n != "" && n != "&block" {
			return true
		}
	}
	return false
}

// paramNamed returns the index of the callee's named (not variadic)
// parameter, or -1.
func paramNamed(callee *ir.Func, name string) int {
	name = strings.TrimPrefix(name, "$")
	for i, p := range callee.Params {
		if !p.Rest && strings.TrimPrefix(callee.Vars[p.Var].Name, "$") == name {
			return i
		}
	}
	return -1
}

func isCallName(n string) bool {
	switch n {
	case "call", "apply", "invoke", "run", "accept", "yield", "()", "__invoke":
		return true
	}
	return false
}

// callbacks runs the closures passed to a library call (forEach, map, each,
// then, route handlers…) with what the call may hand them: the receiver's
// elements and the other arguments. It returns the joined results.
func (c *fnCtx) callbacks(st *state, in *ir.Instr, recv Val, args []Val) (Val, bool) {
	var fns []*ir.Func
	var data Taint
	data = data.union(c.eff(st, recv, 2))
	for _, a := range args {
		if len(a.Fns) > 0 {
			fns = unionFns(fns, a.Fns)
		} else {
			data = data.union(c.eff(st, a, 2))
		}
	}
	if len(fns) == 0 {
		return Val{}, false
	}
	out := Val{Def: true}
	syn := *in // the closure's own call: no receiver or operands of the library call
	syn.Call = &ir.Call{Kind: ir.CallDynamic, Name: in.Call.Name, Recv: ir.None}
	for _, fn := range fns {
		s := c.a.sums[fn]
		if s == nil || fn == c.fn {
			continue
		}
		actual := make([]Val, len(fn.Params))
		for i := range actual {
			actual[i] = Val{Def: true, Taint: data}
		}
		out = joinVal(out, c.applySummary(st, &syn, fn, s, Val{Def: true}, actual))
	}
	return out, true
}

// noteParamCall records in the summary that a parameter holding a function
// is called with these arguments.
func (c *fnCtx) noteParamCall(st *state, op ir.Value, fnVal Val, args []Val) {
	param := -1
	for _, l := range fnVal.Taint {
		if isParam(l.Src) && l.Field == "" {
			param = paramIndex(l.Src)
		}
	}
	if param < 0 || len(c.sum.calls) >= 16 {
		return
	}
	k := sumCall{param: param}
	for _, a := range args {
		k.args = append(k.args, c.eff(st, a, 2))
	}
	c.sum.calls = append(c.sum.calls, k)
}

// defaultFlow is a call without a model: its result carries the taint of
// its receiver and arguments.
func (c *fnCtx) defaultFlow(st *state, recv Val, args []Val) Val {
	out := Val{Def: true, Taint: c.eff(st, recv, 2)}
	for _, a := range args {
		out.Taint = out.Taint.union(c.eff(st, a, 2))
	}
	return out
}

func (c *fnCtx) library(st *state, in *ir.Instr, recv Val, args []Val, recvType string, newObj int32) Val {
	call := in.Call
	entries := c.a.lookupCall(c.lm, call, recvType)
	c.checkSinks(st, in, entries, recv, args)
	var (
		out        Val
		haveResult bool
		sanitized  uint32
		sanitizer  bool
		prop       bool
		clean      bool
	)
	out.Def = true
	for _, e := range entries {
		switch {
		case e.eval != nil && !haveResult:
			ops := make([]*ir.Const, 0, len(args)+1)
			if !call.Recv.IsNone() && call.Kind == ir.CallMethod && e.eval.Fn != "property" {
				ops = append(ops, recv.Const)
			}
			for _, a := range args {
				ops = append(ops, a.Const)
			}
			if k := evaluate(e.eval.Fn, ops, c.a.p.props); k != nil {
				out.Const = k
			}
		case e.container != nil && !haveResult:
			if v, ok := c.container(st, in, e.container.Op, recv, args); ok {
				out = v
				haveResult = true
			}
		case e.setter != nil:
			c.setter(st, e, recv, args)
		case e.sanitizer != nil && !e.sanitizer.Guard:
			sanitized |= e.sanMask
			sanitizer = true
		case e.prop != nil:
			prop = true
			if e.prop.Clean {
				clean = true
				continue
			}
			c.propagate(st, in, e, recv, args, &out)
		}
	}
	if !haveResult {
		switch {
		case clean && !prop || clean && len(out.Taint) == 0:
			var t Taint
			t = t.union(c.eff(st, recv, 2))
			for _, a := range args {
				t = t.union(c.eff(st, a, 2))
			}
			out.Taint = t.mask(optIn)
		case prop:
			// set by propagate
		default:
			k := out.Const
			out = c.defaultFlow(st, recv, args)
			out.Const = k
		}
	}
	if sanitizer {
		out.Taint = out.Taint.mask(^sanitized)
	}
	for _, e := range entries {
		switch {
		case e.source != nil:
			lab := Taint{{Src: realSrc(e.srcMask), Classes: e.srcMask, Trace: (*Trace)(nil).add(c.file, in.Pos, e.source.Kind+" input from "+call.Name)}}
			if len(e.source.Taints) == 0 {
				out.Taint = out.Taint.union(lab)
			}
			for _, t := range e.source.Taints {
				switch {
				case t == "ret":
					out.Taint = out.Taint.union(lab)
				case t == "recv":
					c.taintValue(st, call.Recv, recv, lab)
				default:
					for _, i := range argIndexes(t, len(args)) {
						c.taintValue(st, call.Args[i], args[i], lab)
					}
				}
			}
		case e.returns != "":
			out.Type = e.returns
		case e.noreturn:
			c.stopped = true
		}
	}
	if newObj >= 0 {
		o := st.objs[newObj]
		if o != nil && !haveResult {
			o = c.mutObj(st, newObj)
			o.Any = joinVal(o.Any, Val{Def: true, Taint: out.Taint})
			out.Objs = []int32{newObj}
			if out.Type == "" {
				out.Type = o.Class
			}
		}
	}
	if out.Type == "" && newObj >= 0 {
		out.Type = c.lm.alias(call.Qual)
	}
	return out
}

// taintValue adds taint to an operand in place (a variable and its objects).
func (c *fnCtx) taintValue(st *state, op ir.Value, v Val, t Taint) {
	for _, id := range v.Objs {
		if o := c.mutObj(st, id); o != nil {
			o.Any.Def = true
			o.Any.Taint = o.Any.Taint.union(t)
		}
	}
	if op.IsVar() {
		cur := c.get(st, op.Var)
		cur.Def = true
		cur.Taint = cur.Taint.union(t)
		c.put(st, op.Var, cur)
	}
}

func (c *fnCtx) propagate(st *state, in *ir.Instr, e *entry, recv Val, args []Val, out *Val) {
	p := e.prop
	var t Taint
	from := p.From
	if len(from) == 0 {
		from = []string{"recv", "args"}
	}
	for _, f := range from {
		if f == "recv" {
			t = t.union(c.eff(st, recv, 2))
			continue
		}
		for _, i := range argIndexes(f, len(args)) {
			t = t.union(c.eff(st, args[i], 2))
		}
	}
	to := p.To
	if len(to) == 0 {
		to = []string{"ret"}
	}
	for _, d := range to {
		switch {
		case d == "ret":
			out.Taint = out.Taint.union(t)
		case d == "recv":
			c.taintValue(st, in.Call.Recv, recv, t)
			if !in.Call.Recv.IsNone() {
				out.Objs = unionObjs(out.Objs, recv.Objs)
			}
		default:
			for _, i := range argIndexes(d, len(args)) {
				c.taintValue(st, in.Call.Args[i], args[i], t)
			}
		}
	}
}

func (c *fnCtx) setter(st *state, e *entry, recv Val, args []Val) {
	s := e.setter
	v := Val{Def: true}
	if s.Value != "" {
		v.Const = parseConstText(s.Value)
	} else if s.Arg < len(args) {
		v = args[s.Arg]
	}
	strong := len(recv.Objs) == 1
	for _, id := range recv.Objs {
		if o := c.mutObj(st, id); o != nil {
			o.setField("@"+s.Field, v, strong)
		}
	}
}

func parseConstText(s string) *ir.Const {
	switch s {
	case "true":
		return ir.Bool(true)
	case "false":
		return ir.Bool(false)
	}
	return ir.Str(s)
}

// container applies a precise container operation to the receiver's
// objects. It reports false when the receiver has no modelled object.
func (c *fnCtx) container(st *state, in *ir.Instr, op string, recv Val, args []Val) (Val, bool) {
	if op == "new" {
		o := &Obj{Type: in.Call.Qual, Class: c.lm.alias(in.Call.Qual), ListOK: true, Exact: true}
		if len(args) > 0 && len(args[0].Objs) == 0 && !args[0].Const.IsNumber() {
			o.Any = Val{Def: true, Taint: c.eff(st, args[0], 2)}
		}
		for _, a := range args {
			for _, id := range a.Objs {
				if src := st.objs[id]; src != nil && int(id) < len(st.objs) {
					cp := src.clone()
					cp.Sym = nil
					cp.Exact = src.Exact
					cp.Type, cp.Class = o.Type, o.Class
					cp.Any = joinVal(cp.Any, Val{Def: true, Taint: src.Sym})
					o = cp
				}
			}
		}
		key := objKey{in: in}
		id := c.newObj(st, key, o)
		return Val{Def: true, Objs: []int32{id}, Type: o.Class}, true
	}
	if len(recv.Objs) == 0 {
		return Val{}, false
	}
	arg := func(i int) Val {
		if i < len(args) {
			return args[i]
		}
		return Val{Def: true}
	}
	strong := len(recv.Objs) == 1
	out := Val{Def: true, Taint: recv.Taint}
	for _, id := range recv.Objs {
		if int(id) >= len(st.objs) || st.objs[id] == nil {
			continue
		}
		switch op {
		case "append":
			o := c.mutObj(st, id)
			if len(args) >= 2 && args[0].Const != nil && args[0].Const.Kind == ir.ConstInt {
				insertAt(o, int(args[0].Const.Int), args[1])
			} else if len(args) > 0 {
				o.appendElem(args[len(args)-1])
			}
		case "insert":
			o := c.mutObj(st, id)
			if args[0].Const != nil && arg(0).Const.Kind == ir.ConstInt {
				insertAt(o, int(arg(0).Const.Int), arg(1))
			} else {
				o.collapse()
				o.Any = joinVal(o.Any, arg(1))
			}
		case "get_index", "get_key":
			v := c.loadIndexConst(st, id, arg(0))
			if op == "get_key" && len(args) > 1 && !v.Def {
				v = args[1]
			} else if op == "get_key" && len(args) > 1 && !st.objs[id].Exact {
				v = joinVal(v, args[1])
			}
			out = joinVal(out, v)
			out.Taint = out.Taint.union(v.Taint)
		case "set_index", "put":
			o := c.mutObj(st, id)
			k := arg(0).Const
			v := arg(1)
			if op == "put" || k != nil && k.Kind == ir.ConstStr {
				if k != nil {
					prev := o.Fields[constKey(k)]
					o.setField(constKey(k), v, strong)
					out = joinVal(out, prev)
				} else {
					o.Any = joinVal(o.Any, v)
				}
			} else if k != nil && k.Kind == ir.ConstInt && o.ListOK && int(k.Int) < len(o.List) && k.Int >= 0 {
				if strong {
					o.List[k.Int] = v
				} else {
					o.List[k.Int] = joinVal(o.List[k.Int], v)
				}
			} else {
				o.collapse()
				o.Any = joinVal(o.Any, v)
			}
		case "remove_index":
			o := c.mutObj(st, id)
			k := arg(0).Const
			if k != nil && k.Kind == ir.ConstInt && o.ListOK && k.Int >= 0 && int(k.Int) < len(o.List) {
				out = joinVal(out, o.List[k.Int])
				if strong {
					o.List = append(o.List[:k.Int], o.List[k.Int+1:]...)
				}
			} else if k != nil && k.Kind == ir.ConstStr {
				// remove(Object) on a list, or a key
				if v, ok := o.Fields[k.Str]; ok {
					out = joinVal(out, v)
					if strong {
						o.deleteField(k.Str)
					}
				}
			} else {
				out.Taint = out.Taint.union(c.eff(st, Val{Def: true, Objs: []int32{id}}, 2))
				o.collapse()
			}
		case "remove_key":
			o := c.mutObj(st, id)
			if k := arg(0).Const; k != nil {
				if v, ok := o.Fields[constKey(k)]; ok {
					out = joinVal(out, v)
					if strong {
						o.deleteField(constKey(k))
					}
				}
			} else {
				out.Taint = out.Taint.union(c.eff(st, Val{Def: true, Objs: []int32{id}}, 2))
			}
		case "any_element":
			v := c.loadIndex(st, Val{Def: true, Objs: []int32{id}}, ir.None)
			out = joinVal(out, v)
			out.Taint = out.Taint.union(v.Taint)
		case "alias":
			out.Objs = unionObjs(out.Objs, []int32{id})
		case "add_all":
			o := c.mutObj(st, id)
			if len(args) > 0 {
				o.collapse()
				o.Any = joinVal(o.Any, Val{Def: true, Taint: c.eff(st, args[0], 2)})
			}
		case "clear":
			o := c.mutObj(st, id)
			if strong {
				o.clearFields()
				o.List, o.ListOK, o.Any = nil, true, Val{}
			}
		}
	}
	out.Const = nil
	if len(recv.Objs) == 1 && (op == "get_index" || op == "get_key") {
		v := c.loadIndexConst(st, recv.Objs[0], arg(0))
		out.Const = v.Const
		if !v.Def && len(args) > 1 {
			out.Const = args[1].Const
		}
	}
	return out, true
}

func insertAt(o *Obj, i int, v Val) {
	if !o.ListOK || i < 0 || i > len(o.List) || len(o.List) >= maxListLen {
		o.collapse()
		o.Any = joinVal(o.Any, v)
		return
	}
	o.List = append(o.List, Val{})
	copy(o.List[i+1:], o.List[i:])
	o.List[i] = v
}

// loadIndexConst reads one object at a key or index value; the result is
// not Def when the object is exact and holds nothing there.
func (c *fnCtx) loadIndexConst(st *state, id int32, key Val) Val {
	o := st.objs[id]
	var out Val
	if key.Const != nil {
		k := key.Const
		if k.Kind == ir.ConstInt && o.ListOK {
			if k.Int >= 0 && int(k.Int) < len(o.List) {
				out = o.List[k.Int]
			}
		} else if v, ok := o.Fields[constKey(k)]; ok {
			out = v
		}
	} else {
		out = c.loadIndex(st, Val{Def: true, Objs: []int32{id}}, ir.None)
		out.Def = true
	}
	if o.Any.Def {
		out = joinVal(out, o.Any)
		out.Const = nil
	}
	if !o.Exact {
		if !out.Def {
			out.Def = true
		}
		out.Taint = out.Taint.union(o.Sym)
	}
	return out
}
