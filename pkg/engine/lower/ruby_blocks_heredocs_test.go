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
