package python

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/vulnscan/vulnscan/services/scan/internal/engine/syntax"
)

// benchSource is one large module made of many copies of the golden
// snippets, each renamed into its own scope so that the file stays valid.
func benchSource(copies int) []byte {
	var body bytes.Buffer
	for i := 0; i < copies; i++ {
		for _, tc := range goldenCases {
			if tc.name == "py2_and_errors" {
				continue
			}
			body.WriteString(tc.src)
			body.WriteString("\n")
		}
	}
	return body.Bytes()
}

func parseBench(tb testing.TB, src []byte) *syntax.Node {
	p := syntax.NewParser(syntax.Limits{Timeout: time.Minute})
	defer p.Close()
	root, _, err := p.Parse(context.Background(), syntax.Python, src)
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// BenchmarkLowerPython measures the lowering alone (the tree is parsed
// once) and reports lines per second.
func BenchmarkLowerPython(b *testing.B) {
	src := benchSource(100)
	root := parseBench(b, src)
	lines := bytes.Count(src, []byte("\n"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Lower("bench/bench.py", src, root); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// TestLowerSpeed keeps the lowering well above 100k lines per second (the
// best of a few runs, so that a busy machine does not fail it).
func TestLowerSpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	src := benchSource(40)
	root := parseBench(t, src)
	lines := float64(bytes.Count(src, []byte("\n")))
	best := 0.0
	for i := 0; i < 5; i++ {
		start := time.Now()
		if _, err := Lower("bench/bench.py", src, root); err != nil {
			t.Fatal(err)
		}
		best = max(best, lines/time.Since(start).Seconds())
	}
	t.Logf("%.0f lines/s", best)
	if best < 120_000 {
		t.Fatalf("lowering runs at %.0f lines/s, want at least 120000", best)
	}
}
