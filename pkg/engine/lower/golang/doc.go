// Package golang lowers Go source files into the engine's IR (package ir),
// following the conventions of the ir package comment. The choices specific
// to Go are these.
//
// # Names
//
// File.Package is the qualifier of the file's own package. Lower, which does
// not know the repository's go.mod, uses the directory of the file ("internal/api"
// for internal/api/users.go; the package clause name for a file at the
// repository root), so that every file of one directory shares it and calls
// between them resolve. LowerModule takes the module path from go.mod and
// qualifies by import path instead ("example.com/app/internal/api"), which
// also lets calls through imports of the repository's own packages resolve.
//
// Repository types are "<qualifier>.<Type>", functions "<qualifier>.<Func>",
// methods "<qualifier>.<Type>.<Method>", closures "<enclosing QName>$func<N>",
// package-level variables and constants the globals "<qualifier>.<Name>".
// Imported names use the import path: `http.Get(u)` is CallStatic Qual
// "net/http" Name "Get", `os.Args` is OpLoadGlobal "os.Args", the type
// `*http.Request` is "net/http.Request". Pointers, slices and arrays are
// stripped from type names (`[]*http.Cookie` is "net/http.Cookie"); map,
// channel and function types are "map", "chan" and "func"; interface{} and
// any are unknown (""). Local names shadow imports. A name declared neither
// locally nor in the file is a package-level name of another file of the same
// package, except that with exactly one dot import an exported name that is
// not declared in the file is taken from the dot-imported package.
//
// Calls of a plain name are CallFunc with Qual set to the package qualifier
// for package functions and Qual "" for Go's built-in functions; calls of a
// local function value (closure variable, parameter) or of a package
// variable of the file are CallDynamic. Conversions to built-in types and to
// types declared in the file are OpCast, except conversions to slice types
// (`[]byte(s)`) and to interfaces, which yield the operand itself.
// Conversions to imported types (`template.HTML(s)`) cannot be told apart
// from function calls by syntax and are CallStatic, which lets models treat
// them as sinks or sanitizers. A reference to a function declared in the file
// used as a value (a handler passed to http.HandleFunc) is OpFunc; one
// declared in another file of the package is OpLoadGlobal of its qualified
// name. A method value `s.handle` of a method declared in the file is OpFunc
// of the method (without its receiver); other method values are
// OpLoadField.
//
// Package-level var (and non-literal const) declarations are stores of the
// globals in the file's Init function, named "<module>" with QName
// "<qualifier>.<module:file.go>" so that the files of one package do not
// share it; closures created there have it as Parent.
//
// Struct and other named types are Classes with their fields; an embedded
// field is also a supertype (its methods are promoted). Methods declared on
// a type of another file of the package belong to a Class of the same
// qualified name in this file. Interfaces are Classes with Interface set and
// abstract methods. Because Go types satisfy interfaces implicitly, a type
// whose methods in the file cover an interface of the file lists that
// interface among its supertypes, so calls through the interface reach it.
//
// # Values and results
//
// A function with several results returns its first one as the return's
// value and the others after it (Block.More): `return rows, err`.
// Destructuring a call follows: `a, err := f()` assigns the call's result to
// a, so the first result keeps the call's type for the analysis (model
// `returns:`), and the later results to the other variables with OpLoadField
// "#1", "#2"… of that result: what the callee returns there, or a clean
// unknown value for a library call. Other multi-value forms give the later
// variables a fresh unknown value (an OpOpaque of nothing); the comma-ok
// forms read the value exactly: `v, ok := m[k]` is OpLoadIndex,
// `v, ok := x.(T)` is OpCast, `v, ok := <-ch` is OpLoadIndex with no index.
//
// Composite literals of structs are OpMakeMap with the field names as string
// keys (positional struct literals use the declared field order when the
// type is declared in the file) and the struct type as Name; slices and
// arrays are OpMakeList; maps are OpMakeMap "map". `&T{...}` and `new(T)`
// make the same object (new(T) with no fields). A variable declared without
// a value gets its zero value: a constant for basic types, an empty list or
// map for slices and maps, an empty object for struct types.
//
// `append(s, x, y)` stores each element with OpStoreIndex (no index: append)
// into s and yields s itself; `append(s, xs...)` stores some element of xs.
// copy(dst, src) likewise. Sending on a channel is an OpStoreIndex with no
// index and receiving an OpLoadIndex with no index. `&x` and `*p` are x and p.
// Slicing yields the operand itself (the same backing array or the same
// string taint); slicing a constant string with constant bounds folds.
// String concatenation is OpBinary "+"; fmt.Sprintf and friends stay calls.
// Constants declared in the file with a literal value are inlined.
//
// # Statements
//
// if, for and switch follow the ir conventions; conditions with && and ||
// become branches. Expression switches are chains of equality branches
// tested in source order with default last; fallthrough jumps to the next
// clause's body. A type switch tests each case with OpBinary "instanceof"
// against the type name (a string constant) and binds its variable with an
// OpCast in single-type clauses. select tests each case with an unknown
// condition (OpOpaque), so every case is a possible path.
//
// Range loops: over a value known to be a slice, array or string (declared
// type, literal, make, append) the key is the index, a fresh value without
// taint; over a channel the single variable is the element; over anything
// else (maps, unknown types) the key is OpOpaque(x), so map keys carry the
// map's taint. The value is always OpLoadIndex(x, None).
//
// defer evaluates the call's target and arguments where the statement
// stands and emits the call again before every later return and panic and at
// the end of the function, most recent first. A go statement is the call
// itself. panic(x) is a throw of x (Go has no handlers, so it leaves the
// function); recover() is a plain call. goto jumps to the labelled block;
// labelled break and continue find their loop or switch by label.
//
// Closures (func literals) are separate Funcs with Parent set; a variable of
// an enclosing function they use is a Captured Var of the same name.
package golang
