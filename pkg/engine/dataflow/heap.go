package dataflow

// Obj is an abstract heap object: an allocation site of the function being
// analysed, or the object a parameter or the receiver refers to. Fields and
// constant map keys are tracked by name, lists by constant index while every
// operation on them is precise; anything else goes to Any. Objects are
// immutable once shared between states: writers clone them first.
//
// A clone shares its original's field map until it writes a field
// (copy on write): most clones are made by joins and by writes to a list or
// to Any, which leave the fields as they were, and copying the map on every
// clone was the largest allocation of the dataflow.
type Obj struct {
	Type   string
	Fields map[string]Val
	List   []Val
	ListOK bool  // List holds exactly the elements, in order
	Any    Val   // contents stored at unknown keys or indexes
	Sym    Taint // contents of a parameter's or the receiver's object (symbolic)
	Class  string
	Exact  bool // allocated here: a key never stored is absent
	Lit    bool // a collection literal (list or map), copied by a copying assign

	// sharedFields says Fields belongs to another object too: ownFields
	// copies it before the first write.
	sharedFields bool
}

const maxListLen = 32
const maxFields = 64

func (o *Obj) clone() *Obj {
	c := *o
	c.sharedFields = o.Fields != nil
	if o.List != nil {
		c.List = append([]Val(nil), o.List...)
	}
	return &c
}

// ownFields makes Fields this object's own map, ready to be written.
func (o *Obj) ownFields() {
	if o.Fields == nil {
		o.Fields, o.sharedFields = map[string]Val{}, false
		return
	}
	if o.sharedFields {
		m := make(map[string]Val, len(o.Fields)+1)
		for k, v := range o.Fields {
			m[k] = v
		}
		o.Fields, o.sharedFields = m, false
	}
}

// deleteField removes key k.
func (o *Obj) deleteField(k string) {
	if _, ok := o.Fields[k]; !ok {
		return
	}
	o.ownFields()
	delete(o.Fields, k)
}

// clearFields drops every field.
func (o *Obj) clearFields() {
	o.Fields, o.sharedFields = nil, false
}

func (o *Obj) setField(k string, v Val, strong bool) {
	old, ok := o.Fields[k]
	if !ok && len(o.Fields) >= maxFields {
		o.Any = joinVal(o.Any, v)
		return
	}
	if !strong {
		v = joinVal(old, v)
	}
	if ok && valSame(old, v) {
		return // no change: keep sharing the map
	}
	o.ownFields()
	o.Fields[k] = v
}

// valSame reports whether a and b are equal and carry the same traces: a
// write of b over a changes nothing.
func valSame(a, b Val) bool {
	if !valEqual(a, b) {
		return false
	}
	for i := range a.Taint {
		if a.Taint[i].Trace != b.Taint[i].Trace {
			return false
		}
	}
	return true
}

// collapse gives up the precise list.
func (o *Obj) collapse() {
	for _, v := range o.List {
		o.Any = joinVal(o.Any, v)
	}
	o.List, o.ListOK = nil, false
}

func (o *Obj) appendElem(v Val) {
	if !o.ListOK || len(o.List) >= maxListLen {
		o.collapse()
		o.Any = joinVal(o.Any, v)
		return
	}
	o.List = append(o.List, v)
}

func joinObj(a, b *Obj) *Obj {
	if a == nil {
		return b
	}
	if b == nil || a == b {
		return a
	}
	out := a.clone()
	for k, v := range b.Fields {
		out.setField(k, v, false)
	}
	out.Any = joinVal(out.Any, b.Any)
	out.Sym = out.Sym.union(b.Sym)
	out.Exact = a.Exact && b.Exact
	if a.ListOK && b.ListOK && len(a.List) == len(b.List) {
		for i := range out.List {
			out.List[i] = joinVal(out.List[i], b.List[i])
		}
	} else {
		out.collapse()
		for _, v := range b.List {
			out.Any = joinVal(out.Any, v)
		}
	}
	if out.Type == "" {
		out.Type = b.Type
	}
	return out
}

func objEqual(a, b *Obj) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	if a.ListOK != b.ListOK || len(a.List) != len(b.List) || len(a.Fields) != len(b.Fields) || !valEqual(a.Any, b.Any) || !a.Sym.equal(b.Sym) {
		return false
	}
	for i := range a.List {
		if !valEqual(a.List[i], b.List[i]) {
			return false
		}
	}
	for k, v := range a.Fields {
		w, ok := b.Fields[k]
		if !ok || !valEqual(v, w) {
			return false
		}
	}
	return true
}

// state is the abstract state at a program point.
type state struct {
	vars []Val
	objs []*Obj
}

func (s *state) copy() *state {
	return &state{vars: append([]Val(nil), s.vars...), objs: append([]*Obj(nil), s.objs...)}
}

// join merges t into s in place and reports whether s changed.
func (s *state) join(t *state) bool {
	changed := false
	for i := range s.vars {
		if i >= len(t.vars) {
			break
		}
		j := joinVal(s.vars[i], t.vars[i])
		if !valEqual(j, s.vars[i]) {
			s.vars[i] = j
			changed = true
		}
	}
	for len(s.objs) < len(t.objs) {
		s.objs = append(s.objs, nil)
	}
	for i, o := range t.objs {
		if o == nil || s.objs[i] == o {
			continue
		}
		if a := s.objs[i]; a != nil && (a.ListOK || len(a.List) == 0) && objEqual(a, o) {
			// joining equal objects leaves a as it is (joins of values are
			// idempotent): spare the copy joinObj would make to find out
			continue
		}
		j := joinObj(s.objs[i], o)
		if !objEqual(j, s.objs[i]) {
			s.objs[i] = j
			changed = true
		}
	}
	return changed
}

// widen makes a state that keeps changing converge: constants are dropped
// and lists collapsed.
func (s *state) widen(prev *state) {
	for i := range s.vars {
		if i < len(prev.vars) && !constEq(s.vars[i].Const, prev.vars[i].Const) {
			s.vars[i].Const = nil
		}
	}
	for i, o := range s.objs {
		if o != nil && o.ListOK {
			c := o.clone()
			c.collapse()
			s.objs[i] = c
		}
	}
}
