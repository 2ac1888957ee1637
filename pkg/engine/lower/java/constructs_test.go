package java_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/java"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

func lowerJava(t *testing.T, src string) *ir.File {
	t.Helper()
	return lowertest.Lower(t, syntax.Java, java.Lower, "app/A.java", []byte(src))
}

// Each case lowers a class and checks lines (or runs of lines) of its IR
// dump.
func TestLowerConstructs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, members string
		want          []string
	}{
		{"integer literals in every base", `
  void f() {
    long a = 0x1FL;
    int b = 017;
    int c = 0b101;
    int d = 1_000;
    long e = 9_000_000_000L;
  }`, []string{"a:long = 31", "b:int = 15", "c:int = 5", "d:int = 1000", "e:long = 9000000000"}},
		{"float literals", `
  void f() {
    double h = 1.5e3;
    float i = 2.5f;
    double j = .5d;
  }`, []string{"h:double = 1500", "i:float = 2.5", "j:double = 0.5"}},
		{"character literals and escapes", `
  void f() {
    char e = 'x';
    char f = '\n';
    char g = '\u0041';
    char h = '\'';
    String j = "t\tq\"\\\u0042";
  }`, []string{`e:char = "x"`, `f:char = "\n"`, `g:char = "A"`, `h:char = "'"`, `j:java.lang.String = "t\tq\"\\B"`}},
		{"static field initialisers go to the class initializer", `
  static final int MAX = 0x10;
  static String NAME = "n" + MAX;`, []string{"func static app.A.<clinit>()", "global java:app.A.MAX = 16", "field static MAX int"}},
		{"nested class members and implicit this", `
  private String name;
  static class Inner { String v; static String s() { return "i"; } }
  void f() {
    String k = Inner.s();
    Inner in = new Inner();
    String l = in.v;
    String m = name;
  }`, []string{"class app.A.Inner", "= call.static app.A.Inner#s()", ":app.A.Inner = call.new app.A.Inner#<init>()",
			":java.lang.String = in.v", ":java.lang.String = this.name\n    m:java.lang.String"}},
		{"annotation arguments", `
  @SuppressWarnings({"a", "b"})
  @Named(value = "n", count = 3)
  void f() {}`, []string{`@java.lang.SuppressWarnings(value="{\"a\", \"b\"}") @app.Named(count="3",value="n")`}},
		{"try with resources declares its resources in the covered body", `
  void f(String p) throws java.io.IOException {
    try (java.io.InputStream s = new java.io.FileInputStream(p)) {
      s.read();
    }
  }`, []string{"s:java.io.InputStream = ", "call.method s.read()"}},
	}
	for _, tc := range cases {
		f := lowerJava(t, "package app;\npublic class A {"+tc.members+"\n}\n")
		dump := ir.Dump(f)
		for _, w := range tc.want {
			require.Contains(t, dump, w, "%s:\n%s", tc.name, dump)
		}
	}
}

// Labelled break and continue leave or restart the outer loop.
func TestLowerLabelledLoops(t *testing.T) {
	t.Parallel()
	f := lowerJava(t, `package app;
public class A {
  void f(int[] xs) {
    outer:
    for (int x : xs) {
      for (int y : xs) {
        if (y > 1) continue outer;
        if (y > 2) break outer;
      }
    }
    done();
  }
  void done() {}
}
`)
	var fn *ir.Func
	for _, g := range f.Funcs {
		if g.Name == "f" {
			fn = g
		}
	}
	require.NotNil(t, fn)
	// Find the outer loop head (the first conditional block) and the block
	// calling done() (the exit), then the jumps the two statements make.
	head, exit := -1, -1
	for _, b := range fn.Blocks {
		if b.Term == ir.TermIf && head < 0 {
			head = b.ID
		}
		for _, in := range b.Instrs {
			if in.Op == ir.OpCall && in.Call.Name == "done" {
				exit = b.ID
			}
		}
	}
	require.GreaterOrEqual(t, head, 0)
	require.GreaterOrEqual(t, exit, 0)
	var jumpsToHead, jumpsToExit int
	for _, b := range fn.Blocks {
		if b.Term == ir.TermJump && len(b.Instrs) == 0 {
			switch b.Succs[0] {
			case head:
				jumpsToHead++
			case exit:
				jumpsToExit++
			}
		}
	}
	require.GreaterOrEqual(t, jumpsToHead, 2, "the outer loop's back edge and continue outer:\n%s", ir.Dump(f))
	require.GreaterOrEqual(t, jumpsToExit, 1, "break outer:\n%s", ir.Dump(f))
	require.True(t, strings.Contains(ir.Dump(f), "y > 2"))
}
