// Package ir is the small intermediate representation shared by every
// language the engine analyses. Language front ends (package lower/...) turn
// a syntax tree into ir.Files; the analysis (package dataflow) only ever sees
// this representation.
//
// A Func is a control-flow graph of Blocks. A Block holds straight-line
// Instrs and ends in one terminator (jump, two-way branch on a condition,
// return, throw, or end). Values are function-local variables (Var, indexed
// by VarID; temporaries included) or constants. Every instruction keeps its
// source position.
//
// Conventions front ends follow:
//   - Expressions are flattened into temporaries in evaluation order.
//   - `switch`/`match`/`case` become chains of equality branches, so that a
//     switch on a constant is pruned like any other known condition.
//   - Short-circuit && and || become branches when either side has effects,
//     and may stay OpBinary otherwise.
//   - Loops are back edges; for-each loops read elements with OpLoadIndex with
//     no index (Args[1] is the zero Value).
//   - try/catch: every block inside a try body lists the catch entries in
//     Block.Handlers; a catch entry binds its exception variable with
//     OpCatch. finally bodies follow both the normal and the catch exits.
//   - Names a file imports are resolved by the front end: a reference to an
//     imported module, class or function is a qualified name (Call.Qual,
//     OpLoadGlobal Name, Var.Type), never the local alias.
//   - Nested functions, lambdas and closures are separate Funcs with Parent
//     set; inside them a reference to a variable of an enclosing function is
//     a Var with Captured set (matched by name), and the enclosing function
//     creates the closure value with OpFunc.
package ir

import (
	"fmt"
	"strconv"
)

// Pos is a source range: 1-based lines and byte offsets into File.Src.
type Pos struct {
	Line, EndLine int32
	Start, End    uint32
}

// VarID indexes Func.Vars. NoVar (-1) means "no variable".
type VarID int32

// NoVar is the absent variable.
const NoVar VarID = -1

// Var is a local variable, parameter, receiver or temporary.
type Var struct {
	Name     string // source name; temporaries are "$t<N>"
	Type     string // declared or evident static type, fully qualified when known ("java.lang.String"); "" unknown
	Captured bool   // a free variable of a closure, bound in an enclosing function by Name
}

// ConstKind is the kind of a constant.
type ConstKind uint8

const (
	ConstStr ConstKind = iota + 1
	ConstInt
	ConstFloat
	ConstBool
	ConstNull // null, nil, None, undefined
)

// Const is a literal value.
type Const struct {
	Kind  ConstKind
	Str   string
	Int   int64
	Float float64
	Bool  bool
}

// String renders the constant as IR text.
func (c *Const) String() string {
	switch c.Kind {
	case ConstStr:
		return strconv.Quote(c.Str)
	case ConstInt:
		return strconv.FormatInt(c.Int, 10)
	case ConstFloat:
		return strconv.FormatFloat(c.Float, 'g', -1, 64)
	case ConstBool:
		return strconv.FormatBool(c.Bool)
	case ConstNull:
		return "null"
	}
	return "?"
}

// Str returns a string constant. Int, Float, Bool and Null likewise.
func Str(s string) *Const       { return &Const{Kind: ConstStr, Str: s} }
func Int(i int64) *Const        { return &Const{Kind: ConstInt, Int: i} }
func Float(f float64) *Const    { return &Const{Kind: ConstFloat, Float: f} }
func Bool(b bool) *Const        { return &Const{Kind: ConstBool, Bool: b} }
func Null() *Const              { return &Const{Kind: ConstNull} }
func (c *Const) IsStr() bool    { return c != nil && c.Kind == ConstStr }
func (c *Const) IsNumber() bool { return c != nil && (c.Kind == ConstInt || c.Kind == ConstFloat) }

// Value is an operand: a variable, a constant, or nothing (the zero Value).
// Build with V, C or None.
type Value struct {
	Var   VarID // NoVar unless a variable
	Const *Const
}

// None is the absent operand.
var None = Value{Var: NoVar}

// V wraps a variable.
func V(v VarID) Value { return Value{Var: v} }

// C wraps a constant.
func C(c *Const) Value { return Value{Var: NoVar, Const: c} }

// IsVar, IsConst and IsNone classify a Value.
func (v Value) IsVar() bool   { return v.Var >= 0 && v.Const == nil }
func (v Value) IsConst() bool { return v.Const != nil }
func (v Value) IsNone() bool  { return v.Var < 0 && v.Const == nil }

// Op is an instruction opcode. The comment gives the meaning of Dst, Args,
// Name and the other fields.
type Op uint8

const (
	OpAssign      Op = iota + 1 // Dst = Args[0]; Name "copy": the value is copied, collection literals (PHP arrays) included, not aliased
	OpUnary                     // Dst = Name Args[0]; Name: "!", "-", "+", "~", "not", "typeof"
	OpBinary                    // Dst = Args[0] Name Args[1]; Name: + - * / % ** == != === !== < <= > >= && || & | ^ << >> >>> in "not in" is "is not" instanceof "." (PHP concat) "??"
	OpCall                      // Dst = Call (Dst may be NoVar)
	OpLoadField                 // Dst = Args[0].Name; Name "#1", "#2"…: a later result of the call whose first result is Args[0]
	OpStoreField                // Args[0].Name = Args[1]
	OpLoadIndex                 // Dst = Args[0][Args[1]]; Args[1] is None for "some element" (iteration, unknown index)
	OpStoreIndex                // Args[0][Args[1]] = Args[2]; Args[1] None appends / unknown index
	OpLoadGlobal                // Dst = global Name (qualified: "java:org.x.Config.KEY", "flask.request", "$_GET", "process.env")
	OpStoreGlobal               // global Name = Args[0]
	OpMakeList                  // Dst = new list/array/tuple/set with elements Args; Name: element or collection type if known ("java.lang.String[]", "list")
	OpMakeMap                   // Dst = new map/dict/object literal; Args alternate key, value; Name: type if known ("dict", "object")
	OpFunc                      // Dst = closure value for Fn (lambda, nested function, method reference)
	OpCast                      // Dst = (Name) Args[0]; Name is the target type ("int", "java.lang.String")
	OpCatch                     // Dst = the exception caught by this handler; Name: caught type(s) joined by "|"
	OpOpaque                    // Dst = some value computed from Args in a way the front end does not model (all operands flow)
)

var opNames = [...]string{"", "assign", "unary", "binary", "call", "loadfield", "storefield", "loadindex", "storeindex",
	"loadglobal", "storeglobal", "makelist", "makemap", "func", "cast", "catch", "opaque"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "op" + strconv.Itoa(int(o))
}

// CallKind says how a call's target is found.
type CallKind uint8

const (
	// CallFunc is a call of a plain name: `foo(x)`. The target is found by
	// scope: a function or method of the enclosing class(es), of the file or
	// package, or an imported function (then the front end sets Qual).
	CallFunc CallKind = iota + 1
	// CallMethod is `recv.name(args)`: the target depends on Recv's type.
	CallMethod
	// CallStatic is a call whose qualifier is a type or module known
	// statically: `Runtime.getRuntime()`, `os.system(x)`, `Foo::bar()`. Qual
	// is the qualified type or module ("java.lang.Runtime", "os").
	CallStatic
	// CallNew constructs an object: Qual is the qualified type.
	CallNew
	// CallDynamic calls a function value: Recv holds the callee (a closure
	// variable, a callback parameter).
	CallDynamic
	// CallSuper calls the superclass's method or constructor (Name "<init>").
	CallSuper
)

// Call is the target and operands of an OpCall.
type Call struct {
	Kind  CallKind
	Name  string   // method or function name as written ("executeQuery"); "<init>" for constructors
	Qual  string   // qualified type or module for CallStatic/CallNew, or a resolved import for CallFunc ("os.path"); "" otherwise
	Recv  Value    // receiver for CallMethod, callee value for CallDynamic; None otherwise
	Args  []Value  // positional and keyword arguments in source order
	Names []string // keyword names parallel to Args ("" positional); nil when there are none
}

// Instr is one instruction.
type Instr struct {
	Op   Op
	Dst  VarID
	Args []Value
	Name string
	Call *Call
	Fn   *Func
	Pos  Pos
}

// TermKind is a block's terminator.
type TermKind uint8

const (
	TermJump   TermKind = iota + 1 // goto Succs[0]
	TermIf                         // if Cond goto Succs[0] else Succs[1]
	TermReturn                     // return Val (Val may be None)
	TermThrow                      // throw Val; Succs are the handlers that may catch it (none: leaves the function)
	TermEnd                        // falls off the end of the function (implicit return), or unreachable
)

// Block is a basic block.
type Block struct {
	ID       int
	Instrs   []Instr
	Term     TermKind
	Cond     Value   // TermIf
	Val      Value   // TermReturn, TermThrow
	More     []Value // TermReturn of several results (Go): the results after Val
	Succs    []int
	Handlers []int // catch entries that receive an exception raised by an instruction of this block
	TermPos  Pos
}

// Annotation is an annotation, attribute or decorator.
type Annotation struct {
	Name string            // qualified when the front end can resolve it ("org.springframework.web.bind.annotation.RequestParam", "flask.Flask.route"), else as written
	Args map[string]string // constant arguments by name ("value" or "0", "1"… for positional ones)
	Pos  Pos
}

// Param is a formal parameter.
type Param struct {
	Var         VarID
	Annotations []Annotation
	Default     bool // has a default value (Python, PHP, JS)
	Rest        bool // variadic / *args / ...rest
}

// Func is a function, method, constructor, lambda or a module's top-level code.
type Func struct {
	Name        string // simple name; "<init>" constructor, "<clinit>" static initializer, "<module>" top-level code, "<lambda>"
	QName       string // qualified: "org.x.Foo.bar", "app.views.index", "pkg/path.Handler", "Foo.bar$lambda1"
	Class       *Class // declaring class, nil for plain functions
	Parent      *Func  // enclosing function of a closure
	File        *File
	Params      []Param
	This        VarID // receiver (this, self, $this) or NoVar
	Vars        []Var
	Blocks      []*Block // Blocks[0] is the entry
	Result      string   // declared result type if known
	Static      bool
	Abstract    bool // no body (interface or abstract method, declaration only)
	Annotations []Annotation
	Pos         Pos
}

// Field is a class field or property.
type Field struct {
	Name   string
	Type   string
	Static bool
	Pos    Pos
}

// Class is a class, interface, trait, enum, module-as-class, or struct type
// with methods (Go).
type Class struct {
	Name        string
	QName       string   // fully qualified: "org.x.Foo", "org.x.Foo$Inner" is written "org.x.Foo.Inner"
	Super       []string // qualified superclass and implemented interfaces / mixins, as resolved by the front end
	Interface   bool
	Outer       *Class // lexically enclosing class
	Fields      []Field
	Methods     []*Func
	Annotations []Annotation
	File        *File
	Pos         Pos
}

// Import binds a local name to a qualified one.
type Import struct {
	Alias string // local name ("request", "np", "Statement"); "*" for wildcard imports
	Path  string // qualified name ("flask.request", "numpy", "java.sql.Statement", "java.util" for "java.util.*")
}

// File is one lowered source file.
type File struct {
	Path    string // repository-relative, slash separated
	Lang    string // "java", "python", "javascript", "typescript", "go", "php", "ruby"
	Package string // Java package, Go import path or package name, Python module path, PHP namespace
	Imports []Import
	Classes []*Class
	Funcs   []*Func // every function of the file, methods and closures included, in source order
	Init    *Func   // top-level code (module body, static initializers of globals), or nil
	Src     []byte
	Lines   int
}

// Line returns the text of 1-based line n of the file, without its newline.
func (f *File) Line(n int) string {
	if n < 1 {
		return ""
	}
	start, line := 0, 1
	for i := 0; i < len(f.Src) && line < n; i++ {
		if f.Src[i] == '\n' {
			line++
			start = i + 1
		}
	}
	if line != n {
		return ""
	}
	end := start
	for end < len(f.Src) && f.Src[end] != '\n' {
		end++
	}
	return string(f.Src[start:end])
}

// Text returns the source text of a position.
func (f *File) Text(p Pos) string {
	if int(p.End) > len(f.Src) || p.Start > p.End {
		return ""
	}
	return string(f.Src[p.Start:p.End])
}

// String renders a Value as IR text for dumps and messages.
func (fn *Func) ValueString(v Value) string {
	switch {
	case v.IsConst():
		return v.Const.String()
	case v.IsVar():
		if int(v.Var) < len(fn.Vars) {
			x := fn.Vars[v.Var]
			if x.Name != "" {
				return x.Name
			}
		}
		return fmt.Sprintf("v%d", v.Var)
	}
	return "_"
}
