package ruby

import (
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// FuzzLowerRuby lowers arbitrary input: no panic, and the IR validates.
func FuzzLowerRuby(f *testing.F) {
	lowertest.Fuzz(f, syntax.Ruby, "fuzz.rb", Lower, corpusFiles(f), []string{
		"x = <<~A\n#{<<~B}\nB\nA\n",
		"case x\nin {a: [*, 1 => b, *]} then b\nend\n",
	})
}
