package dataflow

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/model"
)

// Config is what an analysis needs besides the code.
type Config struct {
	Models     map[string]*model.Set        // by model language ("java", "python", "javascript", "go", "php", "ruby")
	Rules      map[string][]*model.FlowRule // compiled flow rules by model language
	Properties map[string]string            // the repository's configuration values (see LoadProperties)
	Budget     Budget
}

// Budget bounds the work. Functions over budget keep the part of their
// analysis done so far and are counted in Stats; the repository budget
// stops the remaining work without failing the scan.
type Budget struct {
	StepsPerFunc int           // instruction visits per function (default 200,000)
	MaxSummaries int           // functions summarised (default 1,000,000)
	Timeout      time.Duration // whole analysis (default 10 minutes)
	Rounds       int           // whole-program rounds for globals, fields and closures (default 3)
}

func (b *Budget) fill() {
	if b.StepsPerFunc <= 0 {
		b.StepsPerFunc = 200_000
	}
	if b.MaxSummaries <= 0 {
		b.MaxSummaries = 1_000_000
	}
	if b.Timeout <= 0 {
		b.Timeout = 10 * time.Minute
	}
	if b.Rounds <= 0 {
		b.Rounds = 3
	}
}

// Finding is a rule violation found by the analysis.
type Finding struct {
	Rule  *model.FlowRule
	File  *ir.File
	Func  *ir.Func
	Pos   ir.Pos   // the sink
	Steps []*Trace // source to sink; empty for constant-argument and property rules
	// Source describes where the data came from ("remote", "weakrand"…)
	// and Entry the framework entry point whose parameter it was, if any.
	Source string
	Entry  string
	// TypedSink: the sink's target was matched on a known receiver type or
	// qualifier rather than a bare method name ("*#name", "?#name").
	TypedSink bool
	// Kind is "flow", "const" or "property".
	Kind string
}

// Stats describes the work done.
type Stats struct {
	Functions      int
	Summaries      int
	Rounds         int
	OverBudget     int // functions whose analysis hit StepsPerFunc
	NotAnalyzed    int // functions left when the repository budget ran out
	Failed         int // functions whose analysis hit a defect and was abandoned
	CallsResolved  int
	CallsToLibrary int
}

// Add accumulates the statistics of another analysis (another repository).
func (s *Stats) Add(o Stats) {
	s.Functions += o.Functions
	s.Summaries += o.Summaries
	s.Rounds = max(s.Rounds, o.Rounds)
	s.OverBudget += o.OverBudget
	s.NotAnalyzed += o.NotAnalyzed
	s.Failed += o.Failed
	s.CallsResolved += o.CallsResolved
	s.CallsToLibrary += o.CallsToLibrary
}

// Result is the outcome of Analyze.
type Result struct {
	Findings []Finding
	Stats    Stats
}

// Analyze runs the whole-program analysis over the lowered files of one
// repository.
func Analyze(ctx context.Context, files []*ir.File, cfg Config) (Result, error) {
	cfg.Budget.fill()
	ctx, cancel := context.WithTimeout(ctx, cfg.Budget.Timeout)
	defer cancel()
	a := newAnalyzer(files, &cfg)
	order := a.order()
	a.st.Functions = len(order)
	for round := 0; round < cfg.Budget.Rounds; round++ {
		a.st.Rounds = round + 1
		a.changed = false
		// each round reports afresh: a later round knows more (globals,
		// fields, captures, the types callers pass) and its findings replace
		// the earlier ones
		a.findings = map[findingKey]*Finding{}
		for i, scc := range order {
			if ctx.Err() != nil {
				a.st.NotAnalyzed += len(order) - i
				break
			}
			a.analyzeSCC(scc)
		}
		if !a.changed || ctx.Err() != nil {
			break
		}
	}
	if err := context.Cause(ctx); err != nil && ctx.Err() != context.DeadlineExceeded {
		return Result{}, err
	}
	reach := a.reachable()
	out := make([]Finding, 0, len(a.findings))
	for _, f := range a.findings {
		if f.Entry == "" && f.Func != nil {
			f.Entry = reach[f.Func]
		}
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File.Path != out[j].File.Path {
			return out[i].File.Path < out[j].File.Path
		}
		if out[i].Pos.Start != out[j].Pos.Start {
			return out[i].Pos.Start < out[j].Pos.Start
		}
		return out[i].Rule.ID < out[j].Rule.ID
	})
	a.st.Summaries = len(a.sums)
	return Result{Findings: out, Stats: a.st}, nil
}

type analyzer struct {
	p        *program
	cfg      *Config
	sums     map[*ir.Func]*summary
	globals  map[string]Val // globals and static fields: real taint and constants
	fields   map[string]Val // instance fields by "Class.field": real taint
	closures map[*ir.Func]map[string]Val
	entries  map[*ir.Func]*entryInfo
	findings map[findingKey]*Finding
	changed  bool
	st       Stats
	lookups  map[lookupKey][]*entry
	funcs    []*ir.Func
	edges    [][]int
	// argTypes is, per function and parameter, the type every call site
	// passes ("" none seen yet, conflictType when they disagree).
	argTypes map[*ir.Func][]string
	// constructed holds the repository classes some code instantiates: their
	// objects' fields are followed through the objects themselves (the
	// receiver's contents at each call), not through one value per field
	// shared by every instance.
	constructed map[string]bool
	// constLists holds the globals every store of which is the same list of
	// constants (nil once any store is something else).
	constLists map[string][]*ir.Const
	scratch    scratch
}

// noteConstList records what a store into a global leaves there.
func (a *analyzer) noteConstList(name string, elems []*ir.Const) {
	old, seen := a.constLists[name]
	switch {
	case !seen:
		a.constLists[name] = elems
		a.changed = true
	case old == nil:
	case elems == nil || len(elems) != len(old):
		a.constLists[name] = nil
		a.changed = true
	default:
		for i := range old {
			if !constEq(old[i], elems[i]) {
				a.constLists[name] = nil
				a.changed = true
				return
			}
		}
	}
}

const conflictType = "\x00"

// noteArgTypes records the types a call passes to a repository function.
func (a *analyzer) noteArgTypes(callee *ir.Func, args []Val) {
	ts := a.argTypes[callee]
	if ts == nil {
		ts = make([]string, len(callee.Params))
		a.argTypes[callee] = ts
	}
	for i := range ts {
		t := conflictType
		if i < len(args) && args[i].Type != "" {
			t = args[i].Type
		}
		switch ts[i] {
		case t, conflictType:
		case "":
			ts[i] = t
			a.changed = true
		default:
			ts[i] = conflictType
			a.changed = true
		}
	}
}

// paramType refines a parameter's declared type with the type every caller
// passes, when that is a subtype of the declared one: library models then
// apply to what the parameter really holds.
func (a *analyzer) paramType(fn *ir.Func, i int, declared string) string {
	ts := a.argTypes[fn]
	if i >= len(ts) || ts[i] == "" || ts[i] == conflictType || ts[i] == declared || declared == "" {
		return declared
	}
	lm := a.p.models(fn.File)
	for _, s := range a.p.supers(lm, lm.alias(ts[i])) {
		if s == lm.alias(declared) {
			return ts[i]
		}
	}
	return declared
}

type findingKey struct {
	rule string
	file string
	pos  uint32
}

type entryInfo struct {
	ep *model.EntryPoint
}

func newAnalyzer(files []*ir.File, cfg *Config) *analyzer {
	a := &analyzer{p: newProgram(files, cfg), cfg: cfg, sums: map[*ir.Func]*summary{}, globals: map[string]Val{}, fields: map[string]Val{},
		closures: map[*ir.Func]map[string]Val{}, entries: map[*ir.Func]*entryInfo{}, findings: map[findingKey]*Finding{},
		lookups: map[lookupKey][]*entry{}, argTypes: map[*ir.Func][]string{}, constructed: map[string]bool{},
		constLists: map[string][]*ir.Const{}}
	a.inferTypes()
	a.findEntries()
	return a
}

// allFuncs lists every function of the program, module code included.
func (a *analyzer) allFuncs() []*ir.Func {
	var out []*ir.Func
	for _, f := range a.p.files {
		out = append(out, f.Funcs...)
		if f.Init != nil {
			out = append(out, f.Init)
		}
	}
	return out
}

// inferTypes fills unknown variable types from what each function's
// instructions make evident: constructions, casts, copies, typed globals and
// calls whose result type a model or the callee declares.
func (a *analyzer) inferTypes() {
	for _, fn := range a.allFuncs() {
		lm := a.p.models(fn.File)
		// a variable assigned values of different types (`b = c ? new A() :
		// new B()`) has none of them: inferred, to tell a later definition
		// of another type; mixed, never typed again
		var inferred, mixed map[ir.VarID]bool
		for pass := 0; pass < 2; pass++ {
			for _, blk := range fn.Blocks {
				for i := range blk.Instrs {
					in := &blk.Instrs[i]
					if in.Op == ir.OpCall && pass == 0 {
						a.noteConstructed(fn, lm, in.Call)
					}
					if in.Dst < 0 || mixed[in.Dst] || fn.Vars[in.Dst].Type != "" && !inferred[in.Dst] {
						continue
					}
					t := ""
					switch in.Op {
					case ir.OpCast:
						t = in.Name
					case ir.OpAssign:
						if v := in.Args[0]; v.IsVar() {
							t = fn.Vars[v.Var].Type
						} else if v.IsConst() {
							t = constType(fn.File.Lang, v.Const)
						}
					case ir.OpLoadGlobal:
						t = a.globalType(lm, in.Name)
					case ir.OpCall:
						t = a.staticResultType(fn, lm, in.Call)
					}
					switch cur := fn.Vars[in.Dst].Type; {
					case t == "" || t == cur:
					case cur != "":
						if mixed == nil {
							mixed = map[ir.VarID]bool{}
						}
						mixed[in.Dst] = true
						fn.Vars[in.Dst].Type = ""
					default:
						if inferred == nil {
							inferred = map[ir.VarID]bool{}
						}
						inferred[in.Dst] = true
						fn.Vars[in.Dst].Type = t
					}
				}
			}
		}
	}
}

// noteConstructed records the repository class a call instantiates.
func (a *analyzer) noteConstructed(fn *ir.Func, lm *langModels, c *ir.Call) {
	switch {
	case c.Kind == ir.CallNew:
		if q := lm.alias(c.Qual); a.p.classes[q] != nil {
			a.constructed[q] = true
		}
	case c.Kind == ir.CallFunc && c.Qual != "":
		if a.p.classes[c.Qual+"."+c.Name] != nil {
			a.constructed[c.Qual+"."+c.Name] = true
		}
	case c.Kind == ir.CallFunc:
		if q := qualify(fn.File.Package, c.Name); a.p.classes[q] != nil {
			a.constructed[q] = true
		}
	}
}

func (a *analyzer) globalType(lm *langModels, name string) string {
	for _, e := range lm.globals[name] {
		if e.returns != "" {
			return e.returns
		}
	}
	// a static field of a repository class: "java:pkg.Class.field" or "pkg.Class.field"
	n := strings.TrimPrefix(name, "java:")
	if i := strings.LastIndexByte(n, '.'); i > 0 {
		if c := a.p.classes[n[:i]]; c != nil {
			for _, f := range c.Fields {
				if f.Name == n[i+1:] {
					return f.Type
				}
			}
		}
	}
	return ""
}

func (a *analyzer) staticResultType(fn *ir.Func, lm *langModels, c *ir.Call) string {
	if c.Kind == ir.CallNew {
		return lm.alias(c.Qual)
	}
	recv := Val{}
	if c.Recv.IsVar() {
		recv.Type = fn.Vars[c.Recv.Var].Type
	}
	for _, callee := range a.p.resolve(fn, c, recv) {
		if callee.Result != "" {
			return callee.Result
		}
		if callee.Name == "<init>" && callee.Class != nil {
			return callee.Class.QName
		}
	}
	for _, e := range a.lookupCall(lm, c, recv.Type) {
		if e.returns != "" {
			return e.returns
		}
	}
	if c.Kind == ir.CallFunc && c.Qual != "" {
		if cl := a.p.classes[c.Qual+"."+c.Name]; cl != nil {
			return cl.QName
		}
	}
	if c.Kind == ir.CallFunc && c.Qual == "" {
		if cl := a.p.classes[qualify(fn.File.Package, c.Name)]; cl != nil && fn.File.Lang == "python" {
			return cl.QName
		}
	}
	return ""
}

func constType(lang string, c *ir.Const) string {
	if c.Kind != ir.ConstStr {
		return ""
	}
	switch lang {
	case "java":
		return "java.lang.String"
	case "python":
		return "str"
	case "javascript", "typescript":
		return "String"
	case "go":
		return "string"
	case "ruby":
		return "String"
	case "php":
		return "string"
	}
	return ""
}

// findEntries marks the functions that frameworks call with request data.
func (a *analyzer) findEntries() {
	for _, fn := range a.allFuncs() {
		lm := a.p.models(fn.File)
		for _, ann := range fn.Annotations {
			for _, e := range lm.entryAnn {
				if annotationMatches(ann.Name, e.name) {
					a.entries[fn] = &entryInfo{ep: e.entry}
				}
			}
		}
		if fn.Class != nil && len(lm.entryOver) > 0 && a.entries[fn] == nil {
			sup := a.p.supers(lm, fn.Class.QName)
			for _, e := range lm.entryOver {
				if e.name != fn.Name {
					continue
				}
				for _, s := range sup[1:] {
					if s == e.qual {
						a.entries[fn] = &entryInfo{ep: e.entry}
					}
				}
			}
		}
		// registrations: a callback passed to a routing call
		if len(lm.entryRegist) == 0 {
			continue
		}
		funcVals := map[ir.VarID][]*ir.Func{}
		modVals := map[ir.VarID]string{} // variables holding a repository module
		for _, blk := range fn.Blocks {
			for i := range blk.Instrs {
				in := &blk.Instrs[i]
				switch in.Op {
				case ir.OpFunc:
					funcVals[in.Dst] = append(funcVals[in.Dst], in.Fn)
				case ir.OpLoadGlobal:
					if fs := a.p.funcs[in.Name]; len(fs) > 0 {
						funcVals[in.Dst] = append(funcVals[in.Dst], fs...)
					} else if m := a.p.canon(in.Name); a.p.packages[m] {
						modVals[in.Dst] = m
					}
				case ir.OpLoadField:
					// a function of a module used as a value: `from pkg import mod; mod.f`
					if x := in.Args[0]; x.IsVar() && modVals[x.Var] != "" {
						funcVals[in.Dst] = append(funcVals[in.Dst], a.p.funcsOf(modVals[x.Var]+"."+in.Name)...)
					}
				case ir.OpAssign:
					if v := in.Args[0]; v.IsVar() && len(funcVals[v.Var]) > 0 {
						funcVals[in.Dst] = append(funcVals[in.Dst], funcVals[v.Var]...)
					}
				case ir.OpCall:
					recvT := ""
					if in.Call.Recv.IsVar() {
						recvT = fn.Vars[in.Call.Recv.Var].Type
					}
					for _, e := range a.lookupCall(lm, in.Call, recvT) {
						if e.entry == nil {
							continue
						}
						idx := e.entry.Callback
						if idx < 0 {
							idx += len(in.Call.Args)
						}
						if idx < 0 || idx >= len(in.Call.Args) {
							continue
						}
						arg := in.Call.Args[idx]
						if arg.IsVar() {
							for _, cb := range funcVals[arg.Var] {
								a.entries[cb] = &entryInfo{ep: e.entry}
							}
						}
						for _, cb := range a.funcsByRef(fn, arg) {
							a.entries[cb] = &entryInfo{ep: e.entry}
						}
					}
				}
			}
		}
	}
}

// funcsByRef finds functions named by a variable holding a plain function
// name (a reference the front end could not resolve).
func (a *analyzer) funcsByRef(fn *ir.Func, v ir.Value) []*ir.Func {
	if !v.IsVar() {
		return nil
	}
	name := fn.Vars[v.Var].Name
	if name == "" || strings.HasPrefix(name, "$t") {
		return nil
	}
	return a.p.funcs[qualify(fn.File.Package, name)]
}

// order returns the strongly connected components of the call graph,
// callees before callers.
func (a *analyzer) order() [][]*ir.Func {
	funcs := a.allFuncs()
	idx := map[*ir.Func]int{}
	for i, f := range funcs {
		idx[f] = i
	}
	edges := make([][]int, len(funcs))
	for i, fn := range funcs {
		seen := map[int]bool{}
		for _, blk := range fn.Blocks {
			for j := range blk.Instrs {
				in := &blk.Instrs[j]
				var callees []*ir.Func
				switch in.Op {
				case ir.OpCall:
					recv := Val{}
					if in.Call.Recv.IsVar() {
						recv.Type = fn.Vars[in.Call.Recv.Var].Type
					}
					callees = a.p.resolve(fn, in.Call, recv)
				case ir.OpFunc:
					callees = []*ir.Func{in.Fn}
				}
				for _, c := range callees {
					if k, ok := idx[c]; ok && !seen[k] {
						seen[k] = true
						edges[i] = append(edges[i], k)
					}
				}
			}
		}
	}
	a.funcs, a.edges = funcs, edges
	// Tarjan's algorithm, iterative.
	index := make([]int, len(funcs))
	low := make([]int, len(funcs))
	on := make([]bool, len(funcs))
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var out [][]*ir.Func
	next := 0
	type frame struct{ v, e int }
	for root := range funcs {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		on[root] = true
		for len(call) > 0 {
			top := &call[len(call)-1]
			v := top.v
			if top.e < len(edges[v]) {
				w := edges[v][top.e]
				top.e++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					on[w] = true
					call = append(call, frame{w, 0})
				} else if on[w] && index[w] < low[v] {
					low[v] = index[w]
				}
				continue
			}
			if low[v] == index[v] {
				var comp []*ir.Func
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					on[w] = false
					comp = append(comp, funcs[w])
					if w == v {
						break
					}
				}
				out = append(out, comp)
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				if low[v] < low[u] {
					low[u] = low[v]
				}
			}
		}
	}
	return out
}

// reachable maps every function reachable from an entry point through the
// call graph to that entry point's framework name.
func (a *analyzer) reachable() map[*ir.Func]string {
	idx := map[*ir.Func]int{}
	for i, f := range a.funcs {
		idx[f] = i
	}
	out := map[*ir.Func]string{}
	var queue []int
	for fn, e := range a.entries {
		name := e.ep.Name
		if name == "" {
			name = "entry point"
		}
		if i, ok := idx[fn]; ok && out[fn] == "" {
			out[fn] = name
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, j := range a.edges[i] {
			if g := a.funcs[j]; out[g] == "" {
				out[g] = out[a.funcs[i]]
				queue = append(queue, j)
			}
		}
	}
	return out
}

// analyzeSCC analyses a component until its summaries are stable. Members
// of a recursive component start from an empty summary (they return
// nothing and reach no sink) and grow to the fixpoint, so a recursive call
// never assumes more than the function does.
func (a *analyzer) analyzeSCC(scc []*ir.Func) {
	// the call graph does not change during the analysis: asked once
	recursive := len(scc) > 1 || a.selfRecursive(scc[0])
	if recursive {
		for _, fn := range scc {
			if a.sums[fn] == nil {
				a.sums[fn] = &summary{}
			}
		}
	}
	for iter := 0; iter < 4; iter++ {
		stable := true
		for _, fn := range scc {
			if len(a.sums) >= a.cfg.Budget.MaxSummaries && a.sums[fn] == nil {
				a.st.NotAnalyzed++
				continue
			}
			s := a.analyzeFunc(fn)
			old := a.sums[fn]
			if old == nil || !old.equal(s) {
				stable = false
			}
			a.sums[fn] = s
		}
		if stable || !recursive {
			return
		}
	}
}

func (a *analyzer) selfRecursive(fn *ir.Func) bool {
	for _, blk := range fn.Blocks {
		for i := range blk.Instrs {
			if in := &blk.Instrs[i]; in.Op == ir.OpCall {
				recv := Val{}
				if in.Call.Recv.IsVar() {
					recv.Type = fn.Vars[in.Call.Recv.Var].Type
				}
				for _, c := range a.p.resolve(fn, in.Call, recv) {
					if c == fn {
						return true
					}
				}
			}
		}
	}
	return false
}

func (a *analyzer) report(f *Finding) {
	k := findingKey{rule: f.Rule.ID, file: f.File.Path, pos: f.Pos.Start}
	if old, ok := a.findings[k]; ok {
		// keep the shorter explanation
		if len(old.Steps) <= len(f.Steps) || len(f.Steps) == 0 {
			return
		}
	}
	a.findings[k] = f
}
