package golang_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/golang"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// Each case lowers a small file and checks lines (or runs of lines) of its
// IR dump: literal values, operators, and the control flow of statements.
func TestLowerConstructs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
		want      []string
	}{
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
	for _, tc := range cases {
		dump := ir.Dump(lowertest.Lower(t, syntax.Go, golang.Lower, "app/a.go", []byte(tc.src)))
		for _, w := range tc.want {
			require.Contains(t, dump, w, "%s:\n%s", tc.name, dump)
		}
	}
}
