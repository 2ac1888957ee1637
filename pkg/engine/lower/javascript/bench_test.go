package javascript

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// BenchmarkLower measures lowering alone (the parse is done once) on the
// corpus files concatenated; it reports lines per second.
func BenchmarkLower(b *testing.B) {
	var sb strings.Builder
	for _, p := range corpusFiles(b) {
		if strings.HasSuffix(p, ".js") {
			src, err := os.ReadFile(p)
			require.NoError(b, err)
			sb.Write(src)
			sb.WriteString("\n")
		}
	}
	for _, tc := range goldenCases {
		if strings.HasSuffix(tc.path, ".js") {
			sb.WriteString("{\n" + tc.src + "\n}\n")
		}
	}
	src := []byte(sb.String())
	lines := strings.Count(sb.String(), "\n")
	p := syntax.NewParser(syntax.Limits{})
	defer p.Close()
	root, _, err := p.Parse(context.Background(), syntax.JavaScript, src)
	require.NoError(b, err)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Lower("src/bench.js", src, root); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
