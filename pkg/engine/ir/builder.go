package ir

import "strconv"

// Builder constructs one Func. Front ends use it so that every language
// produces control-flow graphs the same way: emitting after a terminator
// opens a fresh (unreachable) block, try bodies attach their handlers to
// every block they create, and break/continue find their loop by label.
type Builder struct {
	Fn       *Func
	cur      *Block
	names    map[string]VarID
	handlers [][]int
	loops    []loopCtx
	temps    int
}

type loopCtx struct {
	label             string
	breakTo, contTo   int
	handlerDepthAtTop int
}

// NewBuilder starts a function of file f. Its entry block is current.
func NewBuilder(f *File, name, qname string) *Builder {
	fn := &Func{Name: name, QName: qname, File: f, This: NoVar}
	b := &Builder{Fn: fn, names: map[string]VarID{}}
	b.cur = b.newBlock()
	return b
}

func (b *Builder) newBlock() *Block {
	blk := &Block{ID: len(b.Fn.Blocks), Cond: None, Val: None}
	if n := len(b.handlers); n > 0 {
		blk.Handlers = b.handlers[n-1]
	}
	b.Fn.Blocks = append(b.Fn.Blocks, blk)
	return blk
}

// NewBlock creates an empty block (covered by the current try handlers) and
// returns its id; it does not make it current.
func (b *Builder) NewBlock() int { return b.newBlock().ID }

// SetBlock makes block id current: following instructions are appended to it.
func (b *Builder) SetBlock(id int) { b.cur = b.Fn.Blocks[id] }

// Current returns the current block id, or -1 when the code point is
// unreachable (after a return, throw, break or continue).
func (b *Builder) Current() int {
	if b.cur == nil {
		return -1
	}
	return b.cur.ID
}

// Reachable reports whether instructions emitted now can execute.
func (b *Builder) Reachable() bool { return b.cur != nil }

// Var returns the variable with the given source name, creating it (with
// type typ) on first use. A later call with a non-empty type fills an
// unknown one.
func (b *Builder) Var(name, typ string) VarID {
	if id, ok := b.names[name]; ok {
		if typ != "" && b.Fn.Vars[id].Type == "" {
			b.Fn.Vars[id].Type = typ
		}
		return id
	}
	id := VarID(len(b.Fn.Vars))
	b.Fn.Vars = append(b.Fn.Vars, Var{Name: name, Type: typ})
	b.names[name] = id
	return id
}

// Declare creates a fresh variable for name, shadowing an earlier one
// (block-scoped declarations that reuse a name with another type).
func (b *Builder) Declare(name, typ string) VarID {
	id := VarID(len(b.Fn.Vars))
	b.Fn.Vars = append(b.Fn.Vars, Var{Name: name, Type: typ})
	b.names[name] = id
	return id
}

// Lookup finds a variable by source name.
func (b *Builder) Lookup(name string) (VarID, bool) {
	id, ok := b.names[name]
	return id, ok
}

// Captured returns the variable standing for a free variable of a closure.
func (b *Builder) Captured(name, typ string) VarID {
	id := b.Var(name, typ)
	b.Fn.Vars[id].Captured = true
	return id
}

// SetType sets a variable's type.
func (b *Builder) SetType(v VarID, typ string) {
	if v >= 0 && typ != "" {
		b.Fn.Vars[v].Type = typ
	}
}

// Temp creates a temporary.
func (b *Builder) Temp(typ string) VarID {
	b.temps++
	id := VarID(len(b.Fn.Vars))
	b.Fn.Vars = append(b.Fn.Vars, Var{Name: tempName(b.temps), Type: typ})
	return id
}

// tempNames holds the names of a function's first temporaries, made once:
// lowering makes millions of temporaries and formatting each name anew was
// a measurable share of it.
var tempNames = func() []string {
	out := make([]string, 512)
	for i := range out {
		out[i] = "$t" + strconv.Itoa(i)
	}
	return out
}()

func tempName(n int) string {
	if n < len(tempNames) {
		return tempNames[n]
	}
	return "$t" + strconv.Itoa(n)
}

// Param adds a formal parameter.
func (b *Builder) Param(name, typ string, ann []Annotation) VarID {
	id := b.Declare(name, typ)
	b.Fn.Params = append(b.Fn.Params, Param{Var: id, Annotations: ann})
	return id
}

// This declares the receiver variable (this, self, $this).
func (b *Builder) This(name, typ string) VarID {
	id := b.Declare(name, typ)
	b.Fn.This = id
	return id
}

// Emit appends an instruction to the current block, opening an unreachable
// block first when the current point is unreachable. in.Dst must be set
// (NoVar when the instruction defines nothing): prefer the typed helpers.
func (b *Builder) Emit(in Instr) {
	if b.cur == nil {
		b.cur = b.newBlock()
	}
	b.cur.Instrs = append(b.cur.Instrs, in)
}

func (b *Builder) emitDst(op Op, typ string, pos Pos, in Instr) Value {
	in.Op = op
	in.Dst = b.Temp(typ)
	in.Pos = pos
	b.Emit(in)
	return V(in.Dst)
}

// Assign emits dst = v.
func (b *Builder) Assign(dst VarID, v Value, pos Pos) {
	b.Emit(Instr{Op: OpAssign, Dst: dst, Args: []Value{v}, Pos: pos})
}

// Copy emits dst = v for a language whose collections are values (PHP
// arrays): dst gets a copy of the collection v holds, not an alias.
func (b *Builder) Copy(dst VarID, v Value, pos Pos) {
	b.Emit(Instr{Op: OpAssign, Dst: dst, Args: []Value{v}, Name: "copy", Pos: pos})
}

// Binary emits a binary operation into a new temporary.
func (b *Builder) Binary(op string, x, y Value, pos Pos) Value {
	return b.emitDst(OpBinary, "", pos, Instr{Name: op, Args: []Value{x, y}})
}

// Unary emits a unary operation into a new temporary.
func (b *Builder) Unary(op string, x Value, pos Pos) Value {
	return b.emitDst(OpUnary, "", pos, Instr{Name: op, Args: []Value{x}})
}

// Call emits a call whose result goes to a new temporary of type typ.
func (b *Builder) Call(c *Call, typ string, pos Pos) Value {
	return b.emitDst(OpCall, typ, pos, Instr{Call: c})
}

// LoadField emits obj.name into a new temporary.
func (b *Builder) LoadField(obj Value, name, typ string, pos Pos) Value {
	return b.emitDst(OpLoadField, typ, pos, Instr{Name: name, Args: []Value{obj}})
}

// StoreField emits obj.name = v.
func (b *Builder) StoreField(obj Value, name string, v Value, pos Pos) {
	b.Emit(Instr{Op: OpStoreField, Dst: NoVar, Name: name, Args: []Value{obj, v}, Pos: pos})
}

// LoadIndex emits obj[idx] (idx None: some element) into a new temporary.
func (b *Builder) LoadIndex(obj, idx Value, typ string, pos Pos) Value {
	return b.emitDst(OpLoadIndex, typ, pos, Instr{Args: []Value{obj, idx}})
}

// StoreIndex emits obj[idx] = v (idx None: append or unknown index).
func (b *Builder) StoreIndex(obj, idx, v Value, pos Pos) {
	b.Emit(Instr{Op: OpStoreIndex, Dst: NoVar, Args: []Value{obj, idx, v}, Pos: pos})
}

// LoadGlobal emits a read of a qualified global.
func (b *Builder) LoadGlobal(name, typ string, pos Pos) Value {
	return b.emitDst(OpLoadGlobal, typ, pos, Instr{Name: name})
}

// StoreGlobal emits a write of a qualified global.
func (b *Builder) StoreGlobal(name string, v Value, pos Pos) {
	b.Emit(Instr{Op: OpStoreGlobal, Dst: NoVar, Name: name, Args: []Value{v}, Pos: pos})
}

// MakeList emits a list/array/tuple/set literal.
func (b *Builder) MakeList(typ string, elems []Value, pos Pos) Value {
	return b.emitDst(OpMakeList, typ, pos, Instr{Name: typ, Args: elems})
}

// MakeMap emits a map/dict/object literal; kv alternates keys and values.
func (b *Builder) MakeMap(typ string, kv []Value, pos Pos) Value {
	return b.emitDst(OpMakeMap, typ, pos, Instr{Name: typ, Args: kv})
}

// Closure emits the creation of a closure value for fn.
func (b *Builder) Closure(fn *Func, pos Pos) Value {
	return b.emitDst(OpFunc, "", pos, Instr{Fn: fn})
}

// Cast emits (typ) v.
func (b *Builder) Cast(typ string, v Value, pos Pos) Value {
	return b.emitDst(OpCast, typ, pos, Instr{Name: typ, Args: []Value{v}})
}

// Catch binds the exception of the current handler block to dst.
func (b *Builder) Catch(dst VarID, types string, pos Pos) {
	b.Emit(Instr{Op: OpCatch, Dst: dst, Name: types, Pos: pos})
}

// Opaque emits a value computed from args in an unmodelled way.
func (b *Builder) Opaque(args []Value, pos Pos) Value {
	return b.emitDst(OpOpaque, "", pos, Instr{Args: args})
}

func (b *Builder) terminate(k TermKind, pos Pos) *Block {
	if b.cur == nil {
		b.cur = b.newBlock()
	}
	blk := b.cur
	blk.Term, blk.TermPos = k, pos
	b.cur = nil
	return blk
}

// Jump ends the current block with a jump to target.
func (b *Builder) Jump(target int, pos Pos) {
	b.terminate(TermJump, pos).Succs = []int{target}
}

// If ends the current block with a two-way branch.
func (b *Builder) If(cond Value, then, els int, pos Pos) {
	blk := b.terminate(TermIf, pos)
	blk.Cond, blk.Succs = cond, []int{then, els}
}

// Return ends the current block with a return.
func (b *Builder) Return(v Value, pos Pos) {
	b.terminate(TermReturn, pos).Val = v
}

// ReturnMore ends the current block returning several results: v and then
// more. A call's later results are read with OpLoadField "#1", "#2"… of its
// result.
func (b *Builder) ReturnMore(v Value, more []Value, pos Pos) {
	blk := b.terminate(TermReturn, pos)
	blk.Val, blk.More = v, more
}

// Throw ends the current block with a throw caught by the enclosing handlers.
func (b *Builder) Throw(v Value, pos Pos) {
	var hs []int
	if n := len(b.handlers); n > 0 {
		hs = append(hs, b.handlers[n-1]...)
	}
	blk := b.terminate(TermThrow, pos)
	blk.Val, blk.Succs = v, hs
}

// PushHandlers makes blocks created from now on (until PopHandlers) covered
// by the given catch entries. The current block is split so the try body
// starts in a covered block.
func (b *Builder) PushHandlers(catchEntries []int, pos Pos) {
	b.handlers = append(b.handlers, catchEntries)
	if b.cur != nil {
		next := b.newBlock()
		b.Jump(next.ID, pos)
		b.cur = next
	}
}

// PopHandlers ends the innermost try body, continuing in an uncovered block.
func (b *Builder) PopHandlers(pos Pos) {
	b.handlers = b.handlers[:len(b.handlers)-1]
	if b.cur != nil {
		next := b.newBlock()
		b.Jump(next.ID, pos)
		b.cur = next
	}
}

// PushLoop registers the targets of break and continue inside a loop (or a
// switch, with contTo -1) with an optional label.
func (b *Builder) PushLoop(label string, breakTo, contTo int) {
	b.loops = append(b.loops, loopCtx{label: label, breakTo: breakTo, contTo: contTo, handlerDepthAtTop: len(b.handlers)})
}

// PopLoop unregisters the innermost loop.
func (b *Builder) PopLoop() { b.loops = b.loops[:len(b.loops)-1] }

// LoopBody lowers a loop's body with body: break jumps to breakTo and
// continue to contTo, where a body that falls through goes as well.
func (b *Builder) LoopBody(label string, breakTo, contTo int, pos Pos, body func()) {
	b.PushLoop(label, breakTo, contTo)
	body()
	b.PopLoop()
	if b.Reachable() {
		b.Jump(contTo, pos)
	}
}

// Labeled lowers a labelled statement that is not a loop with body: a
// break naming label goes to the end of the statement.
func (b *Builder) Labeled(label string, pos Pos, body func()) {
	end := b.NewBlock()
	b.PushLoop(label, end, -1)
	body()
	b.PopLoop()
	if b.Reachable() {
		b.Jump(end, pos)
	}
	b.SetBlock(end)
}

// Break jumps to the end of the innermost (or labelled) loop or switch.
func (b *Builder) Break(label string, pos Pos) {
	for i := len(b.loops) - 1; i >= 0; i-- {
		if label == "" || b.loops[i].label == label {
			b.Jump(b.loops[i].breakTo, pos)
			return
		}
	}
	b.terminate(TermEnd, pos)
}

// Continue jumps to the next iteration of the innermost (or labelled) loop.
func (b *Builder) Continue(label string, pos Pos) {
	for i := len(b.loops) - 1; i >= 0; i-- {
		l := b.loops[i]
		if l.contTo >= 0 && (label == "" || l.label == label) {
			b.Jump(l.contTo, pos)
			return
		}
	}
	b.terminate(TermEnd, pos)
}

// Finish closes the current block with TermEnd and returns the function.
func (b *Builder) Finish(pos Pos) *Func {
	if b.cur != nil {
		b.terminate(TermEnd, pos)
	}
	for _, blk := range b.Fn.Blocks {
		if blk.Term == 0 {
			blk.Term = TermEnd
		}
		// A block starts with zero operands, which name variable 0: the
		// terminator operands its kind does not use become None.
		if blk.Term != TermIf {
			blk.Cond = None
		}
		if blk.Term != TermReturn && blk.Term != TermThrow {
			blk.Val = None
		}
		if blk.Term != TermReturn {
			blk.More = nil
		}
	}
	return b.Fn
}
