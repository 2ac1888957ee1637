package lower_test

import "testing"

// Each case lowers a small file and checks lines (or runs of lines) of its
// IR dump: literal values, operators, and the control flow of statements.
func TestGoConstructs(t *testing.T) {
	t.Parallel()
	cases := []dumpCase{
		{"several results: returned together, read by position", `package app
func two(s string) (string, error) { return "ls", nil }
func named() (a, b int) { return }
func f() {
	_, e := two("x")
	m := map[string]int{}
	v, ok := m["k"]
}
`, []string{`return "ls", null`, "return a, b", "= call.func app#two(\"x\")\n    $t2 = $t1.#1\n    e = $t2", "$t4 = m[\"k\"]\n    $t5 = opaque()"}},
		{"number, rune and string literals", `package app
func f() {
	a := 0x1F
	b := 0o17
	c := 1_000
	d := 'x'
	e := '\n'
	g := 1.5e3
	h := ` + "`raw\\n`" + `
	i := "esc\t\"q\""
	j := -7
	k := -2.5
	_, _, _, _, _, _, _, _, _, _ = a, b, c, d, e, g, h, i, j, k
}
`, []string{"a:int = 31", "b:int = 15", "c:int = 1000", "d:int = 120", "e:int = 10", "g:float64 = 1500",
			`h:string = "raw\\n"`, `i:string = "esc\t\"q\""`, "j:int = -7", "k:float64 = -2.5"}},
		{"unary and bit-clear operators", `package app
func f(a, b int, c bool) {
	k := ^a
	l := !c
	m := a &^ b
	n := -a
	_, _, _, _ = k, l, m, n
}
`, []string{"= ~ a\n", "= ! c\n", "= a & b\n", "= - a\n"}},
		{"short-circuit with calls branches", `package app
import "os"
func f() bool {
	return os.Getenv("A") != "" && os.Getenv("B") != ""
}
`, []string{" = call.static os#Getenv(\"A\")", ":bool = true\n    jump", ":bool = false\n    jump", " = call.static os#Getenv(\"B\")"}},
		{"short-circuit without calls stays binary", `package app
func f(a, b int) bool {
	return a > 1 || b > 2
}
`, []string{"$t1 = a > 1\n    $t2 = b > 2\n    $t3 = $t1 || $t2\n    return $t3\n"}},
		{"defers run in reverse order at the exit", `package app
import "os"
func f(p *os.File) {
	defer p.Close()
	defer (func() { recover() })()
	defer func() {}()
}
`, []string{"$t1 = func app.f$func1\n    $t2 = func app.f$func2\n    call.dynamic $t2.()\n    call.dynamic $t1.()\n    call.method p.Close()\n    end", "func app.f$func1() in app.f", "call.func recover()"}},
		{"channel receive reads some element", `package app
func f() string {
	ch := make(chan string)
	v := <-ch
	return v
}
`, []string{"ch:chan = $t1", "= ch[_]"}},
	}
	goFE.run(t, "app/a.go", cases)
}

// Types, embedded fields, select, type switches, range forms, goto,
// method values, variadic calls and increments, each checked in the lowered
// IR.
func TestGoTypesAndStatements(t *testing.T) {
	t.Parallel()
	src := `package app

import (
	"context"
	"fmt"
	"net/http"
)

type Store interface {
	Get(ctx context.Context, k string) (string, error)
}

type mem struct {
	m map[string]string
	Store
}

func (s *mem) Get(ctx context.Context, k string) (string, error) {
	v, ok := s.m[k]
	if !ok {
		return "", fmt.Errorf("missing %s", k)
	}
	return v, nil
}

func handle(w http.ResponseWriter, r *http.Request) {
	ch := make(chan string, 1)
	select {
	case v := <-ch:
		fmt.Fprint(w, v)
	case ch <- "x":
	default:
	}
	var x interface{} = r
	switch t := x.(type) {
	case *http.Request:
		_ = t.URL
	case string:
	}
	for k := range map[string]int{"a": 1} {
		_ = k
	}
	goto end
end:
	p := &mem{m: map[string]string{"k": "v"}}
	f := p.Get
	_, _ = f(r.Context(), "k")
	fn := func(a ...string) int { return len(a) }
	_ = fn([]string{"a"}...)
	var n int
	n++
	n += 2
}
`
	goFE.requireDump(t, "app/d.go", src,
		// interfaces and structs with an embedded interface
		"interface app.Store\n", "class app.mem : app.Store\n  field m map\n  field Store app.Store",
		"func abstract app.Store.Get(ctx context.Context, k string) string",
		// a comma-ok map read
		"func app.mem.Get(ctx context.Context, k string) string this=s\n  b0:\n    $t1:map = s.m\n    $t2 = $t1[k]",
		"ok = ", `call.static fmt#Errorf("missing %s", k)`,
		// select: a receive reads an element, a send stores one
		"= ch[_]\n    v = ", `ch[_] = "x"`, "call.static fmt#Fprint(w, v)",
		// a type switch casts in each case
		`x instanceof "net/http.Request"`, ":net/http.Request = (net/http.Request) x\n    t:net/http.Request = ",
		`x instanceof "string"`, ":string = (string) x",
		// range over a map binds its keys
		`map map {"a", 1}`, "= opaque($t11)\n    k = ",
		// composite literals of structs are maps of their fields
		`:app.mem = map app.mem {"m", $t`,
		// a method value is the method, a variadic spread passes elements
		"= func app.mem.Get\n    f = ", "call.dynamic f.(", "func app.handle$func1(a string) int in app.handle",
		// increments
		"n:int = 0\n    $t", "= n + 1\n", "= n + 2\n",
	)
}
