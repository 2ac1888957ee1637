package lower_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
)

// Each case lowers a class with the given members and checks lines (or runs
// of lines) of its IR dump.
func TestJavaConstructs(t *testing.T) {
	t.Parallel()
	cases := []dumpCase{
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
	for i := range cases { // each case is the members of one class
		cases[i].src = "package app;\npublic class A {" + cases[i].src + "\n}\n"
	}
	javaFE.run(t, "app/A.java", cases)
}

// Labelled break and continue leave or restart the outer loop.
func TestJavaLabelledLoops(t *testing.T) {
	t.Parallel()
	f := javaFE.file(t, "app/A.java", `package app;
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

// Records, enums, default methods, initializers, constructor chaining and
// modern statements and expressions, each checked in the lowered IR.
func TestJavaModernJava(t *testing.T) {
	t.Parallel()
	javaFE.requireDump(t, "app/B.java", `package app;
import java.util.*;
import java.util.function.Function;
import static java.lang.Math.max;
record Point(int x, int y) {}
enum Level { LOW, HIGH }
interface Shape { default double area() { return 0; } }
class B implements Shape {
  private final List<String> items = new ArrayList<>();
  static int counter;
  static { counter = 5; }
  { items.clear(); }
  B() { this(1); }
  B(int n) { super(); }
  String run(Object o, String... rest) {
    if (o instanceof String s && !s.isEmpty()) { return s; }
    String r = switch (rest.length) { case 0 -> "none"; case 1 -> { yield rest[0]; } default -> "many"; };
    Function<String, Integer> f = String::length;
    int[] arr = new int[] {1, 2};
    var m = new HashMap<String, List<String>>();
    for (var e : m.entrySet()) { e.getKey(); }
    synchronized (this) { counter++; }
    assert counter > 0 : "positive";
    int z = max(1, 2);
    boolean b = o == null || o.equals("x");
    String t = """
        text block
        """;
    throw new IllegalStateException(r + t);
  }
}
`,
		"import max = java.lang.Math.max\n", "import Function = java.util.function.Function\n",
		// a record has its fields, a canonical constructor and accessors
		"class app.Point : java.lang.Record\n  field x int\n  field y int",
		"func app.Point.<init>(x int, y int) this=this\n  b0:\n    this.x = x\n    this.y = y",
		"func app.Point.x() int this=this\n  b0:\n    $t1:int = this.x\n    return $t1",
		// enum constants are static fields constructed in the class initializer
		"class app.Level : java.lang.Enum\n  field static LOW app.Level\n  field static HIGH app.Level",
		"= call.new app.Level#<init>()\n    global java:app.Level.LOW = ",
		"func app.Shape.area() double this=this",
		"global java:app.B.counter = 5",
		// field initializers and instance initializers run in the constructor
		// that calls super, not in the one that delegates with this(...)
		"func app.B.<init>() this=this\n  b0:\n    call.func <init>(1)\n    end",
		"func app.B.<init>(n int) this=this\n  b0:\n    call.super <init>()\n    $t1:java.util.ArrayList = call.new java.util.ArrayList#<init>()\n    this.items = $t1",
		// instanceof patterns bind a cast
		`o instanceof "java.lang.String"`, "= (java.lang.String) o\n    s:java.lang.String = ",
		// switch expressions, yield included
		"= $t5 == 0\n", `= "none"`, ":java.lang.String = rest[0]", `= "many"`,
		// method references become closures
		"func app.B.run$lambda1(a0) in app.B.run",
		"list int[] [1, 2]", "call.new java.util.HashMap#<init>()", "= call.method m.entrySet()",
		"call.method e.getKey()",
		// static fields are globals, increments store back
		"global java:app.B.counter = $t",
		// assert throws an AssertionError with its message
		`call.new java.lang.AssertionError#<init>("positive")`,
		// static imports call the imported class
		"call.static java.lang.Math#max(1, 2)",
		// || with a call branches
		":boolean = true", ":boolean = false", `call.method o.equals("x")`,
		// text blocks
		`t:java.lang.String = "text block\n"`,
		":java.lang.IllegalStateException = call.new java.lang.IllegalStateException#<init>(",
	)
}
