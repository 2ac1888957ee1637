package ruby

import (
	"os"
	"strings"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// BenchmarkLower measures lowering alone (the tree is parsed once) over the
// corpus files repeated into one large file, and reports lines per second.
func BenchmarkLower(b *testing.B) {
	var sb strings.Builder
	for _, p := range corpusFiles(b) {
		src, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		sb.Write(src)
		sb.WriteString("\n")
	}
	lowertest.Bench(b, syntax.Ruby, Lower, "bench.rb", []byte(strings.Repeat(sb.String(), 50)))
}
