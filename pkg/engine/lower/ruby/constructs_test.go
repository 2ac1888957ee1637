package ruby_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
	"github.com/vulnscan/vulnscan/pkg/engine/lower/ruby"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// Each case lowers a small file and checks lines (or runs of lines) of its
// IR dump.
func TestLowerConstructs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
		want      []string
	}{
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
	for _, tc := range cases {
		dump := ir.Dump(lowertest.Lower(t, syntax.Ruby, ruby.Lower, "lib/a.rb", []byte(tc.src)))
		for _, w := range tc.want {
			require.Contains(t, dump, w, "%s:\n%s", tc.name, dump)
		}
	}
}
