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

// TestLowerSpeed keeps the lowering cheap next to the tree-sitter parse of
// the same source, measured in the same run so that a busy machine slows
// both (the parse floor runs well above 100k lines per second, so does the
// lowering when it costs less than the parse). Best of a few runs.
func TestLowerSpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	src := benchSource(40)
	root := parseBench(t, src)
	p := syntax.NewParser(syntax.Limits{Timeout: time.Minute})
	defer p.Close()
	lines := float64(bytes.Count(src, []byte("\n")))
	bestLower, bestParse := time.Duration(1<<62), time.Duration(1<<62)
	for i := 0; i < 5; i++ {
		start := time.Now()
		if err := p.ParseOnly(syntax.Python, src); err != nil {
			t.Fatal(err)
		}
		bestParse = min(bestParse, time.Since(start))
		start = time.Now()
		if _, err := Lower("bench/bench.py", src, root); err != nil {
			t.Fatal(err)
		}
		bestLower = min(bestLower, time.Since(start))
	}
	t.Logf("lowering %.0f lines/s, parse floor %.0f lines/s", lines/bestLower.Seconds(), lines/bestParse.Seconds())
	if bestLower > bestParse {
		t.Fatalf("lowering takes %v, longer than the parse (%v)", bestLower, bestParse)
	}
}
