package lower_test

import "testing"

// Blocks, procs, lambdas, heredocs and nested multiple assignment, each
// checked in its lowered IR.
func TestRubyBlocksProcsHeredocs(t *testing.T) {
	t.Parallel()
	rubyFE.run(t, "a.rb", []dumpCase{
		{"blocks become nested functions called with elements", `
def blk(xs)
  xs.each { |x| use(x) }
  xs.map do |a, b| a + b end
end
`, []string{
			"$t1 = func blk$block1\n    $t2 = xs[_]\n    $t3 = call.dynamic $t1.($t2)\n    $t4 = call.method xs.each(&block=$t1)\n",
			"$t7 = call.dynamic $t5.($t6, $t6)\n    $t8 = call.method xs.map(&block=$t5)\n    $t9:Array = list Array [$t7]\n",
			"func blk$block1(x) in blk\n", "func blk$block2(a, b) in blk\n  b0:\n    jump b1\n  b1:\n    $t1 = a + b\n    return $t1",
		}},
		{"procs and stabby lambdas are called dynamically", `
def pl
  pr = proc { |y| y * 2 }
  lm = ->(z) { z + 1 }
  pr.call(1)
end
`, []string{
			"pr = $t1\n", "lm = $t2\n", "= call.dynamic pr.(1)\n",
			"func pl$lambda1(y) in pl\n", "func pl$lambda2(z) in pl\n  b0:\n    jump b1\n  b1:\n    $t1 = z + 1\n",
		}},
		{"squiggly heredocs interpolate", `
def here(n)
  s = <<~SQL
    SELECT * FROM t WHERE id = #{n}
  SQL
  s
end
`, []string{"$t1:String = \"SELECT * FROM t WHERE id = \" + n\n    $t2:String = $t1 + \"\\n\"\n    s:String = $t2\n    return s"}},
		{"nested multiple assignment", `
def multi(t)
  a, (b, c), *d = t
  [a, b, c, d]
end
`, []string{"$t1 = t[0]\n    a = $t1\n    $t2 = t[1]\n    $t3 = $t2[0]\n    b = $t3\n    $t4 = $t2[1]\n    c = $t4\n    d = t\n"}},
	})
}

// Implicit block parameters, block forwarding, accessors declared by
// string, pattern matching, escapes and raise.
func TestRubyImplicitParamsPatternsRaise(t *testing.T) {
	t.Parallel()
	rubyFE.run(t, "a.rb", []dumpCase{
		{"numbered and it parameters", `
def impl(xs)
  xs.each { puts _1 }
  xs.map { it.upcase }
end
`, []string{"func impl$block1(_1) in impl\n", "$t1 = call.func puts(_1)", "func impl$block2(it) in impl\n", "$t1 = call.method it.upcase()"}},
		{"block forwarding and symbol procs", `
def fwd(xs, &blk)
  xs.each(&blk)
  xs.map(&:to_s)
end
`, []string{"func fwd(xs, &block Proc)\n  b0:\n    blk:Proc = &block\n    $t1 = call.method xs.each(&block=blk)\n    $t2 = call.method xs.map(&block=\"to_s\")\n"}},
		{"accessors by string and define_method", `
class Foo
  attr_accessor "name"
  define_method(:dyn) { |a| a }
end
`, []string{"class Foo\n  field name", "func Foo#name() this=self\n", "func Foo#name=(value) this=self\n  b0:\n    self.name = value\n", "func Foo#dyn(a) this=self\n  b0:\n    return a"}},
		{"case/in binds hash, array and guarded patterns", `
def pat(v)
  case v
  in {name: String => nm}
    nm
  in [Integer => a, *rest]
    a
  in x if x
    x
  end
end
`, []string{"$t3 = v[\"name\"]\n    nm = $t3\n", "$t5 = v[0]\n    a = $t5\n    rest = v\n", "x = v\n", "if x b10 b9\n", "$t1 = null\n"}},
		{"hex and unicode escapes decode", `
def esc
  "\x41\u0042"
end
`, []string{"func esc()\n  b0:\n    return \"AB\""}},
		{"raise with a class and with a message", `
def r(m)
  raise ArgumentError, m
  raise "boom #{m}"
end
`, []string{"$t1:ArgumentError = call.new ArgumentError#<init>(m)\n    throw $t1 []", "$t3:RuntimeError = call.new RuntimeError#<init>($t2)\n    throw $t3 []"}},
	})
}

// Class methods, attr and Proc.new.
func TestRubyClassMethodsAttrProcNew(t *testing.T) {
	t.Parallel()
	rubyFE.run(t, "a.rb", []dumpCase{
		{"new inside a class method constructs the class", `
class Svc
  def self.build(x)
    new(x)
  end
  attr :size
end
`, []string{"func static Svc.build(x)\n  b0:\n    $t1:Svc = call.new Svc#<init>(x)\n    return $t1", "class Svc\n  field size", "func Svc#size() this=self\n  b0:\n    $t1 = self.size\n"}},
		{"Proc.new with a block is a closure", `
def pn
  pr = Proc.new { |x| x }
  pr.call(2)
end
`, []string{"$t1 = func pn$lambda1\n    pr = $t1\n    $t2 = call.dynamic pr.(2)\n", "func pn$lambda1(x) in pn\n"}},
	})
}

// Class instance variables, globals, literals of every kind, pattern
// tests, parameter forms, bare raise and yield.
func TestRubyGlobalsLiteralsParameters(t *testing.T) {
	t.Parallel()
	rubyFE.run(t, "a.rb", []dumpCase{
		{"instance variables of the class body are globals of the class", `
class Reg
  @count = 0
  def self.inc
    @count
  end
end
`, []string{"func static Reg.inc()\n  b0:\n    $t1 = global Reg::@count\n    return $t1", "global Reg::@count = 0\n"}},
		{"globals, defined?, floats, shorthand hashes, <<, in and => patterns, __FILE__ and __LINE__", `
def gv
  $stdout.puts($PROGRAM_NAME)
  x = defined?(foo)
  y = -1.5
  h = {x:, "k" => 2}
  arr = []
  arr << 1
  ok = (h in {x: Integer})
  h => {k:}
  [__FILE__, __LINE__, x, y, k, ok]
end
`, []string{
			"$t1 = global $stdout\n    $t2 = global $PROGRAM_NAME\n    $t3 = call.method $t1.puts($t2)\n",
			"$t4 = opaque()\n    x = $t4\n    y = -1.5\n", `$t5:Hash = map Hash {"x", x, "k", 2}`, "$t7 = call.method arr.<<(1)\n",
			"$t9 = opaque(h)\n    ok = $t9\n", "$t10 = h[\"k\"]\n    k = $t10\n",
			`list Array ["a.rb", 11, x, y, k, ok]`,
		}},
		{"splat, keyword splat, block and forwarding parameters", `
def params(a, *rest, **opts, &blk)
  [a, rest, opts]
end

def fwd(...)
  other(...)
end
`, []string{"func params(a, rest, opts, &block Proc)\n  b0:\n    blk:Proc = &block\n", "func fwd(...)\n  b0:\n    $t1 = opaque()\n    $t2 = call.func other($t1)\n"}},
		{"destructured parameters", `
def destr((a, b), c)
  a
end
`, []string{"func destr($destructured, c)\n  b0:\n    $t1 = $destructured[0]\n    a = $t1\n    $t2 = $destructured[1]\n    b = $t2\n    return a"}},
		{"bare raise rethrows, yield calls the block", `
def rr
  raise
end

def bare
  yield 1
end
`, []string{"func rr()\n  b0:\n    $t1 = global $!\n    throw $t1 []", "func bare(&block Proc)\n  b0:\n    $t1 = call.dynamic &block.(1)\n    return $t1"}},
	})
}
