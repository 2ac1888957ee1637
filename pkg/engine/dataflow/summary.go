package dataflow

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/model"
)

// summary is what callers need to know of a function: its result in terms
// of its parameters (symbolic labels) and of sources inside it, the sinks its
// parameters reach, the constant-argument checks its parameters reach, what
// it stores into its parameters' objects and into fields.
type summary struct {
	ret    Val
	rets   []Val // later results (Go)
	sinks  []sumSink
	consts []sumConst
	muts   []sumMut
	fields []sumField
	calls  []sumCall
}

// sumCall: the function calls the function value its parameter holds
// (a block, a callback) with arguments of this taint.
type sumCall struct {
	param int
	args  []Taint
}

type sumSink struct {
	src     int32
	field   string
	classes uint32
	rule    *model.FlowRule
	file    *ir.File
	fn      *ir.Func
	pos     ir.Pos
	trace   *Trace // from the parameter to the sink
	typed   bool
}

type sumConst struct {
	param int
	rule  *model.FlowRule
	file  *ir.File
	fn    *ir.Func
	pos   ir.Pos
}

type sumMut struct {
	target int32  // labelParam(i) or labelThis
	field  string // the field written, "" for contents at unknown keys
	taint  Taint
}

type sumField struct {
	key   string
	taint Taint
}

func (s *summary) equal(t *summary) bool {
	if !valEqual(s.ret, t.ret) || len(s.rets) != len(t.rets) || len(s.sinks) != len(t.sinks) || len(s.consts) != len(t.consts) || len(s.muts) != len(t.muts) || len(s.fields) != len(t.fields) || len(s.calls) != len(t.calls) {
		return false
	}
	for i := range s.rets {
		if !valEqual(s.rets[i], t.rets[i]) {
			return false
		}
	}
	for i := range s.muts {
		if s.muts[i].target != t.muts[i].target || s.muts[i].field != t.muts[i].field || !s.muts[i].taint.equal(t.muts[i].taint) {
			return false
		}
	}
	for i := range s.fields {
		if s.fields[i].key != t.fields[i].key || !s.fields[i].taint.equal(t.fields[i].taint) {
			return false
		}
	}
	for i := range s.sinks {
		if s.sinks[i].src != t.sinks[i].src || s.sinks[i].field != t.sinks[i].field || s.sinks[i].classes != t.sinks[i].classes {
			return false
		}
	}
	return true
}

func (s *summary) addSink(k sumSink) {
	for i := range s.sinks {
		o := &s.sinks[i]
		if o.src == k.src && o.field == k.field && o.rule == k.rule && o.pos == k.pos && o.file == k.file {
			o.classes |= k.classes
			return
		}
	}
	if len(s.sinks) < 64 {
		s.sinks = append(s.sinks, k)
	}
}

func (s *summary) addConst(k sumConst) {
	for _, o := range s.consts {
		if o.param == k.param && o.rule == k.rule && o.pos == k.pos && o.file == k.file {
			return
		}
	}
	if len(s.consts) < 64 {
		s.consts = append(s.consts, k)
	}
}

func (s *summary) addField(key string, t Taint) {
	if len(t) == 0 {
		return
	}
	for i := range s.fields {
		if s.fields[i].key == key {
			s.fields[i].taint = s.fields[i].taint.union(t)
			return
		}
	}
	if len(s.fields) < 64 {
		s.fields = append(s.fields, sumField{key: key, taint: t})
	}
}

// symbolic keeps the labels that stand for parameters or the receiver.
func (t Taint) symbolic() Taint {
	i := 0
	for i < len(t) && isReal(t[i].Src) {
		i++
	}
	if i == len(t) {
		return nil
	}
	return t[i:]
}

// onlyReal keeps the real labels.
func (t Taint) onlyReal() Taint {
	i := 0
	for i < len(t) && isReal(t[i].Src) {
		i++
	}
	if i == 0 {
		return nil
	}
	return t[:i]
}
