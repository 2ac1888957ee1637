package lower_test

import "testing"

// Each case lowers a small file and checks lines (or runs of lines) of its
// IR dump.
func TestRubyConstructs(t *testing.T) {
	t.Parallel()
	cases := []dumpCase{
		{"numeric literals", `def f
  a = 0x1F
  b = 0b11
  c = 1_000
  d = 017
  e = 0o17
  g = 0d42
  h = 1.5e3
  i = -5
end
`, []string{"a = 31", "b = 3", "c = 1000", "d = 15", "e = 15", "g = 42", "h = 1500", "i = -5"}},
		{"strings, symbols and characters", `def f
  g = "a\tb\x41\u0042"
  i = :sym
  j = %w[a b]
  k = nil
  o = ?z
end
`, []string{`g = "a\tbAB"`, `i = "sym"`, `list Array ["a", "b"]`, "k = null", `o = "z"`}},
		{"escapes: octal, single-quoted, file and line", `def f
  a = "\101\0"
  b = 'x\\y\'z\n'
  c = %q(p\\q)
  d = __FILE__
  e = __LINE__
end
`, []string{`a = "A\x00"`, `b = "x\\y'z\\n"`, `c = "p\\q"`, `d = "lib/a.rb"`, "e = 6"}},
		{"unary operators", `def f(a)
  l = !a
  m = -a
  n = not(a)
  o = ~a
end
`, []string{"= ! a\n    l = ", "= - a\n    m = ", "= ! a\n    n = ", "= ~ a\n    o = "}},
		{"block parameters: destructuring and implicit names", `def f(items)
  items.each { |(x, y), z| puts x }
  items.map { it.upcase }
  items.map { _1.downcase }
end
`, []string{"func f$block1($destructured, z) in f", "= $destructured[0]\n    x = ", "= $destructured[1]\n    y = ",
			"func f$block2(it) in f", "call.method it.upcase()", "func f$block3(_1) in f", "call.method _1.downcase()"}},
		{"nested multiple assignment", `def f
  x, (y, z) = 1, [2, 3]
end
`, []string{"x = 1\n", "[0]\n    y = ", "[1]\n    z = "}},
	}
	rubyFE.run(t, "lib/a.rb", cases)
}

// Declarations, case and pattern matching, rescue/ensure, conditional
// forms, literals and blocks of one class, each checked in its lowered
// method.
func TestRubyClassAndControlFlow(t *testing.T) {
	t.Parallel()
	src := `module Api
  class Items < Base
    attr_accessor :name
    class << self
      def build(x) = new(x)
    end
    def show(v)
      case v
      when 1, 2 then "small"
      when String then "str"
      else "other"
      end
    end
    def pat(v)
      case v
      in {name: String => n} then n
      in [first, *rest] then first
      else nil
      end
    end
    def flow(a)
      begin
        risky(a)
      rescue ArgumentError => e
        log(e)
      ensure
        done
      end
      x = a&.strip
      x ||= "d"
      until a do a = next_val end
      r = (1..10)
      s = %Q(q #{a})
      h = <<~TXT
        heredoc #{a}
      TXT
      yield a if block_given?
      l = ->(q) { q + 1 }
      l.call(2)
    end
  end
end
`
	rubyFE.requireDump(t, "app/items.rb", src,
		"class Api::Items : Base\n  field name",
		// attr_accessor defines a reader and a writer
		"func Api::Items#name() this=self\n  b0:\n    $t1 = self.name\n    return $t1",
		"func Api::Items#name=(value) this=self\n  b0:\n    self.name = value\n    return value",
		// a singleton method constructs through new
		"func static Api::Items.build(x)\n  b0:\n    $t1:Api::Items = call.new Api::Items#<init>(x)",
		// when compares each value, a class matches by an unknown test
		"= v == 1\n", "= v == 2\n", "= global String\n", `= "str"`, `= "other"`,
		// patterns bind what they capture
		`= v["name"]`+"\n    n = ", "= v[0]\n    first = ", "rest = v\n",
		// rescue binds the exception, ensure runs on both exits and rethrows
		"handlers [1 2]\n    $t2 = call.func risky(a)", "e = catch ArgumentError\n    $t4 = call.func log(e)",
		"= catch Exception\n    $t6 = call.func done()\n    throw $t5 []",
		// safe navigation, ||= and until
		"call.method a.strip()", "x = \"d\"\n", "= call.func next_val()\n    a = ",
		// ranges, %Q and heredocs
		"list Range [1, 10]", `:String = "q " + a`, `:String = "heredoc " + a`,
		// yield calls the block parameter when one is given
		"func Api::Items#flow(a, &block Proc) this=self", "= &block != null\n", "call.dynamic &block.(a)",
		// lambdas are closures called dynamically
		"func Api::Items#flow$lambda1(q) in Api::Items#flow", "call.dynamic l.(2)",
	)
}
