package java

import (
	"strings"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

func lowerSource(t testing.TB, path string, src []byte) *ir.File {
	t.Helper()
	return lowertest.Lower(t, syntax.Java, Lower, path, src)
}

// goldenCases are small programs, one per construct; their IR dumps are in
// testdata/golden/<name>.ir (go test -run TestLowerGolden -update rewrites them).
var goldenCases = []struct{ name, src string }{
	{"imports", `package p.q;
import java.util.*;
import java.sql.Connection;
import static java.util.Objects.requireNonNull;
import static java.lang.Math.*;
class A {
  List<String> names;
  Connection c;
  Helper h;
  Object f(String s) { requireNonNull(s); return max(1, 2); }
}`},
	{"class_members", `package p;
public class A extends Base implements Runnable {
  private static final String PREFIX = "pre";
  private final String name = PREFIX + "x";
  int[] counts, more[];
  static int loaded;
  static { loaded = 1; }
  { counts = new int[3]; }
  A() { super(); }
  A(String n) { this(); }
  @Override public void run() { this.name.length(); }
  static int twice(int x) { return 2 * x; }
}`},
	{"implicit_ctor", `class B { String v = "x"; void m() {} }`},
	{"nested_inner", `package p;
class Outer {
  String secret;
  static String shared;
  class Inner { String get() { return secret + Outer.this.secret + shared; } }
  static class Nested { Inner make(Outer o) { return o.new Inner(); } }
  Outer.Inner build() { return new Inner(); }
}`},
	{"local_anonymous", `package p;
class A {
  Runnable r(final String s) {
    class Local { String v() { return s; } }
    Runnable x = new Runnable() { public void run() { System.out.println(s + new Local().v()); } };
    return x;
  }
}`},
	{"enum_interface_record", `package p;
enum Color { RED, GREEN("g"); Color() {} Color(String s) {} String low() { return name(); } }
interface Shape { double area(); default String label() { return "shape"; } }
record Point(int x, String label) { Point { label.trim(); } String show() { return label + x; } }
record Pair(String a, String b) {}`},
	{"locals_literals", `class A {
  void m() {
    var list = new java.util.ArrayList<String>();
    int i = 0x1F; long l = 1_000L; float f = 2.5f; double d = 1e3; char c = '\n';
    boolean b = true; String s = "a\"b"; Object o = null;
    String tb = """
        hello
          world
        """;
    int[][] grid = {{1}, {2, 3}};
    String[] arr = new String[]{"a", s};
    String[] empty = new String[4];
  }
}`},
	{"operators", `class A {
  int n; int[] a = new int[2];
  String m(String s, int k) {
    s += "x"; k *= 2; k++; --k; n++; a[0] += 1;
    int neg = -k; boolean not = !(k > 1);
    String r = s + k + 'c';
    boolean both = k > 0 && s.isEmpty();
    boolean plain = k > 0 || k < -5;
    String t = k > 1 ? s : "none";
    Object o = (Object) s;
    if (o instanceof String str && !str.isEmpty()) { return str; }
    return r + t + a.length;
  }
}`},
	{"control_flow", `class A {
  int m(int[] xs, java.util.List<String> names) {
    int sum = 0;
    for (int i = 0; i < xs.length; i++) { if (xs[i] < 0) continue; sum += xs[i]; }
    for (String n : names) { if (n == null) break; }
    for (int x : xs) sum -= x;
    while (sum > 10) sum--;
    do { sum++; } while (sum < 0);
    outer:
    for (int i = 0; i < 3; i++) { for (int j = 0; j < 3; j++) { if (j == i) continue outer; if (j > 2) break outer; } }
    synchronized (this) { sum++; }
    assert sum >= 0 : "negative";
    if (sum > 100) { return 1; } else if (sum > 50) { return 2; } else { sum = 0; }
    return sum;
  }
}`},
	{"switches", `class A {
  enum Mode { ON, OFF }
  String m(String s, int n, char c, Mode mode) {
    String out = "";
    switch (s) { case "a": out = "A"; case "b": out += "B"; break; default: out = s; }
    switch (n) { case 1, 2 -> out = "small"; case 3 -> { out = "three"; } default -> throw new IllegalStateException(); }
    switch (c) { case 'x': return "x"; }
    switch (mode) { case ON: out = "on"; break; case OFF: break; }
    int v = switch (s) { case "k" -> 1; default -> { int t = n * 2; yield t; } };
    Object o = s;
    String d = switch (o) { case String str -> str; default -> "other"; };
    return out + v + d;
  }
}`},
	{"patterns", `package p;
record Pt(int x, String label) {}
class A {
  String f(Object o) {
    if (o instanceof Pt(int x, String label) && x > 0) { return label; }
    return switch (o) {
      case String s when s.length() > 3 -> s.trim();
      case String s -> s;
      case Pt(var x, var label) -> label + x;
      case null, default -> "none";
    };
  }
}`},
	{"generics", `package p;
import java.util.*;
class Box<T extends CharSequence, K> {
  T item; K key; List<T> all;
  <R, S extends R> R pick(S s, Map<K, ? extends T> m) { T t = item; R r = s; return r; }
  static <E extends Comparable<? super E>> E max(Collection<? extends E> c) { return null; }
}`},
	{"exceptions", `import java.io.*;
class A {
  String m(String p) throws IOException {
    try (BufferedReader r = new BufferedReader(new FileReader(p)); var w = new StringWriter()) {
      return r.readLine();
    } catch (FileNotFoundException | SecurityException e) {
      throw new IOException(e);
    } catch (RuntimeException e) {
      return e.getMessage();
    } finally {
      p = null;
    }
  }
  void n() { try { risky(); } finally { cleanup(); } }
  void risky() {}
  void cleanup() {}
}`},
	{"calls", `package p;
import java.util.List;
import org.owasp.esapi.ESAPI;
class A extends B {
  A() { super("x"); }
  void m(javax.servlet.http.HttpServletRequest req) {
    String v = req.getParameter("q");
    String e = ESAPI.encoder().encodeForHTML(v);
    String f = org.owasp.esapi.ESAPI.encoder().encodeForSQL(null, v);
    int n = Integer.parseInt("5");
    String u = "lit".toUpperCase();
    local(v); super.m(req); this.local(v);
    java.io.File file = new java.io.File(v);
    List<String> l = java.util.Collections.emptyList();
    System.out.println(v);
  }
  void local(String s) {}
}`},
	{"lambdas", `import java.util.function.*;
class A {
  String field;
  void m(String s, java.util.List<String> xs) {
    Function<String, String> f = x -> x + s;
    BiFunction<String, String, String> g = (a, b) -> { String c = a + b + field; return c; };
    Supplier<Supplier<String>> nested = () -> () -> s;
    xs.forEach(System.out::println);
    Function<String, Integer> p = Integer::parseInt;
    Supplier<StringBuilder> mk = StringBuilder::new;
    Function<Integer, String[]> arr = String[]::new;
    Runnable r = this::toString;
  }
}`},
	{"static_fields", `package p;
class Config {
  static String KEY = "k";
  static String get() { return KEY; }
}
class User {
  void m() {
    String a = Config.KEY;
    Config.KEY = "new";
    String b = p.Config.KEY + Integer.MAX_VALUE;
    java.util.Map<String, String> env = System.getenv();
  }
}`},
	{"annotations", `package p;
import org.springframework.web.bind.annotation.*;
@RestController
@RequestMapping("/api")
class C {
  @GetMapping(value = "/x", produces = "text/plain")
  String x(@RequestParam("q") String q, @PathVariable String id, int... rest) { return q; }
}`},
}

func TestLowerGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			lowertest.Golden(t, tc.name, lowerSource(t, tc.name+".java", []byte(tc.src)))
		})
	}
}

// TestLowerCorpus lowers every Java file of the labelled corpus and checks
// that the IR is well formed and every function has an entry block.
func TestLowerCorpus(t *testing.T) {
	lowertest.LowerCorpus(t, "java", syntax.Java, Lower)
}

func corpusFiles(t testing.TB) []string { return lowertest.CorpusFiles(t, "java") }

func TestLowerDetails(t *testing.T) {
	f := lowerSource(t, "A.java", []byte(`package p;
import java.util.List;
class A {
  String f;
  Runnable m(String s) { return () -> System.out.println(s + f); }
}`))
	require.Equal(t, "p", f.Package)
	require.Len(t, f.Classes, 1)
	var lambda *ir.Func
	for _, fn := range f.Funcs {
		if fn.Name == "<lambda>" {
			lambda = fn
		}
	}
	require.NotNil(t, lambda)
	require.Equal(t, "p.A.m", lambda.Parent.QName)
	captured := map[string]bool{}
	for _, v := range lambda.Vars {
		if v.Captured {
			captured[v.Name] = true
		}
	}
	require.Equal(t, map[string]bool{"s": true, "this": true}, captured)
}

func TestLowerNilTree(t *testing.T) {
	_, err := Lower("x.java", nil, nil)
	require.Error(t, err)
}

func FuzzLowerJava(f *testing.F) {
	var seeds []string
	for _, tc := range goldenCases {
		seeds = append(seeds, tc.src)
	}
	lowertest.Fuzz(f, syntax.Java, "fuzz.java", Lower, corpusFiles(f), seeds)
}

// BenchmarkLower measures lowering alone (parsing excluded) on a generated
// file, in source lines per second.
func BenchmarkLower(b *testing.B) {
	lowertest.Bench(b, syntax.Java, Lower, "Gen.java", generated(2000))
}

// generated returns a servlet-like class with n methods of about ten lines.
func generated(n int) []byte {
	var sb strings.Builder
	sb.WriteString("package gen;\nimport java.util.*;\nimport javax.servlet.http.*;\npublic class Gen extends HttpServlet {\n  private Map<String, String> cache = new HashMap<>();\n")
	for i := 0; i < n; i++ {
		sb.WriteString(`  public String handle` + strings.Repeat("x", i%7) + `(HttpServletRequest req, int n) throws Exception {
    String v = req.getParameter("p");
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) { sb.append(v).append(i); }
    if (v != null && v.length() > 3) { cache.put(v, sb.toString()); } else { v = "none"; }
    switch (n) { case 1: v += "a"; break; default: v = v.trim(); }
    try { v = String.valueOf(Integer.parseInt(v)); } catch (NumberFormatException e) { v = e.getMessage(); }
    Runnable r = () -> System.out.println(sb);
    return v + cache.get("k");
  }
`)
	}
	sb.WriteString("}\n")
	return []byte(sb.String())
}

// TestLowerBrokenInput lowers sources with syntax errors: the tree has
// ERROR nodes and missing children, and lowering must still produce valid IR.
func TestLowerBrokenInput(t *testing.T) {
	for _, src := range []string{
		`class A { void m() { x. = 1; a[ ] += ; (). y++; } }`,
		`class A { void m() { try { } catch ( { } finally } }`,
		`class A { void m() { for (String s : ) { switch (x) { case -> ; } } } }`,
		`class { int = ; void () { new () {}; } }`,
		`class A { void m() { Runnable r = () -> ; Object o = X::; int[] a = {,}; } }`,
		`enum E { A(, B { void f( } }`,
		`record R( { }`,
		`class A { A() { this(; super.; } }`,
	} {
		lowerSource(t, "Broken.java", []byte(src))
	}
}
