package ruby

import (
	"context"
	"os"
	"strings"
	"testing"

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
	src := []byte(strings.Repeat(sb.String(), 50))
	p := syntax.NewParser(syntax.Limits{})
	defer p.Close()
	root, _, err := p.Parse(context.Background(), syntax.Ruby, src)
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Count(string(src), "\n")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Lower("bench.rb", src, root); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
