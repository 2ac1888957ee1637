package dataflow

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/model"
)

// sinkOperands returns the operands a sink selects.
func sinkOperands(s *model.Sink, call *ir.Call, recv Val, args []Val) []Val {
	var out []Val
	if len(s.Args) == 0 && len(s.Kwargs) == 0 && !s.Recv {
		return args
	}
	for _, i := range s.Args {
		j := i
		if j < 0 {
			j += len(args)
		}
		// a positional index counts positional arguments only
		pos := -1
		for k := range args {
			if k < len(call.Names) && call.Names[k] != "" {
				continue
			}
			pos++
			if pos == j {
				out = append(out, args[k])
				break
			}
		}
	}
	for _, kw := range s.Kwargs {
		for k, n := range call.Names {
			if n == kw && k < len(args) {
				out = append(out, args[k])
			}
		}
	}
	if s.Recv {
		out = append(out, recv)
	}
	return out
}

// checkSinks reports tainted data reaching a library sink, records
// parameters reaching it in the summary, and checks constant arguments.
func (c *fnCtx) checkSinks(st *state, in *ir.Instr, entries []*entry, recv Val, args []Val) {
	for _, e := range entries {
		switch {
		case e.sink != nil && e.sink.UnlessField != nil:
			for _, v := range sinkOperands(e.sink, in.Call, recv, args) {
				for _, id := range v.Objs {
					o := st.objs[id]
					if o == nil || !o.Exact && o.Sym != nil {
						continue // an object made elsewhere: its properties are unknown here
					}
					f, ok := o.Fields["@"+e.sink.UnlessField.Name]
					if ok && f.Const != nil && constString(f.Const) == e.sink.UnlessField.Equals {
						continue
					}
					c.a.report(&Finding{Rule: e.rule, File: c.file, Func: c.fn, Pos: in.Pos, Kind: "property", TypedSink: e.typed()})
				}
			}
		case e.sink != nil:
			if e.sink.When != nil && !c.argCond(st, e.sink.When, in.Call, args) || e.sink.Unless != nil && c.argCond(st, e.sink.Unless, in.Call, args) {
				continue
			}
			for _, v := range sinkOperands(e.sink, in.Call, recv, args) {
				t := c.eff(st, v, 3)
				for _, l := range t {
					if l.Classes&e.rule.ClassBit == 0 {
						continue
					}
					if isReal(l.Src) {
						c.a.report(&Finding{Rule: e.rule, File: c.file, Func: c.fn, Pos: in.Pos, Kind: "flow", TypedSink: e.typed(),
							Steps: append(l.Trace.Steps(), &Trace{File: c.file, Pos: in.Pos, What: "reaches " + in.Call.Name}), Source: sourceKind(l.Trace)})
					} else {
						c.sum.addSink(sumSink{src: l.Src, field: l.Field, classes: l.Classes, rule: e.rule, file: c.file, fn: c.fn, pos: in.Pos, trace: l.Trace, typed: e.typed()})
					}
				}
			}
		case e.constRule != nil:
			i := e.constRule.Arg
			if i < 0 || i >= len(args) {
				continue
			}
			v := args[i]
			if v.Const != nil {
				if e.constRule.Re.MatchString(constString(v.Const)) {
					c.a.report(&Finding{Rule: e.rule, File: c.file, Func: c.fn, Pos: in.Pos, Kind: "const", TypedSink: e.typed()})
				}
				continue
			}
			for _, l := range v.Taint {
				if isParam(l.Src) {
					c.sum.addConst(sumConst{param: paramIndex(l.Src), rule: e.rule, file: c.file, fn: c.fn, pos: in.Pos})
				}
			}
		}
	}
}

// typed reports whether an entry names a type or qualifier.
func (e *entry) typed() bool { return e.qual != "*" && e.qual != "?" }

// argCond tests a sink condition on a call's arguments.
func (c *fnCtx) argCond(st *state, cond *model.ArgCond, call *ir.Call, args []Val) bool {
	var v Val
	found := false
	if cond.Kwarg != "" {
		for i, n := range call.Names {
			if n == cond.Kwarg && i < len(args) {
				v, found = args[i], true
			}
		}
	} else if cond.Arg >= 0 && cond.Arg < len(args) {
		v, found = args[cond.Arg], true
	}
	if !found {
		return false
	}
	if cond.Key != "" {
		v = c.loadField(st, v, cond.Key)
	}
	if cond.Type != "" {
		ok := false
		for _, s := range c.a.p.supers(c.lm, c.lm.alias(v.Type)) {
			ok = ok || s == cond.Type
		}
		if !ok {
			return false
		}
	}
	if cond.Re == nil {
		return true
	}
	return v.Const != nil && cond.Re.MatchString(constString(v.Const))
}

func sourceKind(t *Trace) string {
	for ; t != nil; t = t.Prev {
		if t.Prev == nil {
			return t.What
		}
	}
	return ""
}

// actual is the caller's taint for a symbolic label: the whole value, or
// one field of it.
func (c *fnCtx) actual(st *state, v Val, field string) Taint {
	if field == "" {
		return c.eff(st, v, 2)
	}
	f := c.loadField(st, v, field)
	return c.eff(st, f, 2)
}

// subst replaces a summary's symbolic labels with the caller's values.
func (c *fnCtx) subst(st *state, t Taint, callee *ir.Func, recv Val, args []Val, at ir.Pos) Taint {
	var out Taint
	for _, l := range t {
		switch {
		case isReal(l.Src):
			l.Trace = l.Trace.add(c.file, at, "returned by "+callee.Name)
			out = out.union(Taint{l})
		case l.Src == labelThis:
			out = out.union(c.actual(st, recv, l.Field).mask(l.Classes))
		case isParam(l.Src):
			i := paramIndex(l.Src)
			var a Taint
			if i < len(args) {
				a = c.actual(st, args[i], l.Field)
				if i == len(callee.Params)-1 && callee.Params[i].Rest {
					for _, more := range args[i+1:] {
						a = a.union(c.eff(st, more, 2))
					}
				}
			}
			out = out.union(a.mask(l.Classes))
		}
	}
	return out
}

// applySummary evaluates a call of a repository function.
func (c *fnCtx) applySummary(st *state, in *ir.Instr, callee *ir.Func, s *summary, recv Val, args []Val) Val {
	out := Val{Def: true, Const: s.ret.Const, Type: s.ret.Type, Fns: s.ret.Fns}
	out.Taint = c.subst(st, s.ret.Taint, callee, recv, args, in.Pos)
	for _, k := range s.sinks {
		actual := c.subst(st, Taint{{Src: k.src, Field: k.field, Classes: k.classes}}, callee, recv, args, in.Pos)
		for _, l := range actual {
			if l.Classes&k.rule.ClassBit == 0 {
				continue
			}
			if isReal(l.Src) {
				steps := l.Trace.Steps()
				steps = append(steps, &Trace{File: c.file, Pos: in.Pos, What: "passed to " + callee.Name})
				for _, t := range k.trace.Steps() {
					if t.Prev == nil {
						continue // the callee's parameter itself
					}
					steps = append(steps, t)
				}
				steps = append(steps, &Trace{File: k.file, Pos: k.pos, What: "reaches the sink"})
				c.a.report(&Finding{Rule: k.rule, File: k.file, Func: k.fn, Pos: k.pos, Steps: steps, Source: sourceKind(l.Trace), Kind: "flow", TypedSink: k.typed})
			} else {
				tr := l.Trace.add(c.file, in.Pos, "passed to "+callee.Name)
				for _, t := range k.trace.Steps() {
					if t.Prev != nil {
						tr = tr.add(t.File, t.Pos, t.What)
					}
				}
				c.sum.addSink(sumSink{src: l.Src, field: l.Field, classes: l.Classes & k.classes, rule: k.rule, file: k.file, fn: k.fn, pos: k.pos, trace: tr, typed: k.typed})
			}
		}
	}
	for _, k := range s.consts {
		if k.param >= len(args) {
			continue
		}
		v := args[k.param]
		if v.Const != nil {
			if k.rule.Const.Re.MatchString(constString(v.Const)) {
				c.a.report(&Finding{Rule: k.rule, File: k.file, Func: k.fn, Pos: k.pos, Kind: "const", TypedSink: true})
			}
		}
	}
	for _, m := range s.muts {
		t := c.subst(st, m.taint, callee, recv, args, in.Pos)
		if len(t) == 0 {
			continue
		}
		op, v := in.Call.Recv, recv
		if isParam(m.target) {
			i := paramIndex(m.target)
			if i >= len(args) {
				continue
			}
			op, v = ir.None, args[i]
			if i < len(in.Call.Args) && len(args) == len(in.Call.Args) {
				op = in.Call.Args[i]
			}
		} else if m.target != labelThis {
			continue
		}
		if m.field == "" || len(v.Objs) == 0 {
			c.taintValue(st, op, v, t)
			continue
		}
		for _, id := range v.Objs {
			if o := c.mutObj(st, id); o != nil {
				o.setField(m.field, Val{Def: true, Taint: t}, false)
			}
		}
	}
	for _, k := range s.calls {
		if k.param >= len(args) {
			continue
		}
		for _, fn := range args[k.param].Fns {
			fs := c.a.sums[fn]
			if fs == nil || fn == c.fn {
				continue
			}
			actual := make([]Val, len(k.args))
			for i, t := range k.args {
				actual[i] = Val{Def: true, Taint: c.subst(st, t, callee, recv, args, in.Pos)}
			}
			syn := *in
			syn.Call = &ir.Call{Kind: ir.CallDynamic, Name: "call", Recv: ir.None}
			c.applySummary(st, &syn, fn, fs, Val{Def: true}, actual)
		}
	}
	for _, f := range s.fields {
		t := c.subst(st, f.taint, callee, recv, args, in.Pos)
		c.sum.addField(f.key, t.symbolic())
		if r := t.onlyReal(); len(r) > 0 {
			c.a.joinField(f.key, Val{Def: true, Taint: r})
		}
	}
	return out
}
