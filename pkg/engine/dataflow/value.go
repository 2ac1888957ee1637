package dataflow

import (
	"sort"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
)

// Label sources: 0 is real taint from sources of attacker-controlled data,
// 1 real taint of opt-in classes only (weak randomness), kept apart so that
// each finding names the source that matters; 2+i stands for the i-th
// parameter of the function being summarised and labelThis for its
// receiver. Symbolic labels let one analysis of a function serve as its
// summary: at a call site they are replaced by the actual arguments' taint.
const (
	labelReal      = 0
	labelRealOptIn = 1
	labelThis      = 1 << 12
)

func labelParam(i int) int32 { return int32(2 + i) }

func isReal(src int32) bool    { return src <= labelRealOptIn }
func isParam(src int32) bool   { return src > labelRealOptIn && src < labelThis }
func paramIndex(src int32) int { return int(src - 2) }

// realSrc is the real label a source of the given classes produces.
func realSrc(mask uint32) int32 {
	if mask&^optIn == 0 {
		return labelRealOptIn
	}
	return labelReal
}

// Trace is one step of a taint path, linked to the step before it.
type Trace struct {
	File *ir.File
	Pos  ir.Pos
	What string
	Prev *Trace
	n    int
}

func (t *Trace) add(f *ir.File, pos ir.Pos, what string) *Trace {
	n := 1
	if t != nil {
		n = t.n + 1
		if t.File == f && t.Pos == pos {
			return t
		}
		if n > maxTraceSteps {
			return t
		}
	}
	return &Trace{File: f, Pos: pos, What: what, Prev: t, n: n}
}

// Steps returns the trace from its first step to its last.
func (t *Trace) Steps() []*Trace {
	var out []*Trace
	for ; t != nil; t = t.Prev {
		out = append(out, t)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

const maxTraceSteps = 24

// Label is taint of some classes coming from one origin.
type Label struct {
	Src     int32
	Classes uint32
	Trace   *Trace
	// Field narrows a symbolic label to one field (or constant key) of the
	// parameter's or receiver's object: an access path of depth one.
	Field string
}

// before orders labels by source, then field.
func (l *Label) before(m *Label) bool {
	return l.Src < m.Src || l.Src == m.Src && l.Field < m.Field
}

func (l *Label) same(m *Label) bool { return l.Src == m.Src && l.Field == m.Field }

// Taint is a small set of labels sorted by source and field, at most one per
// pair.
type Taint []Label

// union returns t ∪ u; it returns t itself when nothing changes.
func (t Taint) union(u Taint) Taint {
	if len(u) == 0 {
		return t
	}
	if len(t) == 0 {
		return u
	}
	changed := false
	for _, l := range u {
		found := false
		for _, m := range t {
			if m.same(&l) {
				found = true
				if l.Classes&^m.Classes != 0 {
					changed = true
				}
				break
			}
		}
		if !found {
			changed = true
		}
		if changed {
			break
		}
	}
	if !changed {
		return t
	}
	out := make(Taint, 0, len(t)+len(u))
	i, j := 0, 0
	for i < len(t) || j < len(u) {
		switch {
		case j >= len(u) || (i < len(t) && t[i].before(&u[j])):
			out = append(out, t[i])
			i++
		case i >= len(t) || u[j].before(&t[i]):
			out = append(out, u[j])
			j++
		default:
			l := t[i]
			l.Classes |= u[j].Classes
			if l.Trace == nil {
				l.Trace = u[j].Trace
			}
			out = append(out, l)
			i++
			j++
		}
	}
	return out
}

// narrow restricts whole-object symbolic labels to one field.
func (t Taint) narrow(field string) Taint {
	if len(t) == 0 {
		return t
	}
	out := make(Taint, 0, len(t))
	for _, l := range t {
		if !isReal(l.Src) && l.Field == "" {
			l.Field = field
		}
		out = out.union(Taint{l})
	}
	return out
}

// mask keeps only the given classes, dropping empty labels.
func (t Taint) mask(m uint32) Taint {
	if len(t) == 0 {
		return t
	}
	same := true
	for _, l := range t {
		if l.Classes&^m != 0 {
			same = false
			break
		}
	}
	if same {
		return t
	}
	var out Taint
	for _, l := range t {
		if l.Classes&m != 0 {
			l.Classes &= m
			out = append(out, l)
		}
	}
	return out
}

func (t Taint) equal(u Taint) bool {
	if len(t) != len(u) {
		return false
	}
	for i := range t {
		if !t[i].same(&u[i]) || t[i].Classes != u[i].Classes {
			return false
		}
	}
	return true
}

// Val is the abstract value of a variable: its taint, its constant value if
// known, the heap objects and closures it may refer to, and its type.
type Val struct {
	Def   bool // assigned on some path (the zero Val is "not yet assigned")
	Taint Taint
	Const *ir.Const
	Objs  []int32
	Fns   []*ir.Func
	Type  string
}

const maxObjsPerVal = 8
const maxFnsPerVal = 8

func constEq(a, b *ir.Const) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func joinVal(a, b Val) Val {
	if !a.Def {
		return b
	}
	if !b.Def {
		return a
	}
	out := a
	out.Taint = a.Taint.union(b.Taint)
	if !constEq(a.Const, b.Const) {
		out.Const = nil
	}
	out.Objs = unionObjs(a.Objs, b.Objs)
	out.Fns = unionFns(a.Fns, b.Fns)
	if a.Type != b.Type {
		if a.Type == "" {
			out.Type = b.Type
		} else if b.Type != "" {
			out.Type = ""
		}
	}
	return out
}

func valEqual(a, b Val) bool {
	if a.Def != b.Def || !constEq(a.Const, b.Const) || a.Type != b.Type || !a.Taint.equal(b.Taint) || len(a.Objs) != len(b.Objs) || len(a.Fns) != len(b.Fns) {
		return false
	}
	for i := range a.Objs {
		if a.Objs[i] != b.Objs[i] {
			return false
		}
	}
	for i := range a.Fns {
		if a.Fns[i] != b.Fns[i] {
			return false
		}
	}
	return true
}

func unionObjs(a, b []int32) []int32 {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := append([]int32(nil), a...)
	for _, o := range b {
		found := false
		for _, p := range out {
			if p == o {
				found = true
				break
			}
		}
		if !found {
			out = append(out, o)
		}
	}
	if len(out) == len(a) {
		return a
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	if len(out) > maxObjsPerVal {
		out = out[:maxObjsPerVal]
	}
	return out
}

func unionFns(a, b []*ir.Func) []*ir.Func {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := append([]*ir.Func(nil), a...)
	for _, f := range b {
		found := false
		for _, g := range out {
			if g == f {
				found = true
				break
			}
		}
		if !found && len(out) < maxFnsPerVal {
			out = append(out, f)
		}
	}
	if len(out) == len(a) {
		return a
	}
	return out
}
