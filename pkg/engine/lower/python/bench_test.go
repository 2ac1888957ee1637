package python

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
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
	lowertest.Bench(b, syntax.Python, Lower, "bench/bench.py", benchSource(100))
}

// BenchmarkLowerVsParse reports the lowering's time as a multiple of the
// tree-sitter parse of the same source, both measured in the same run (a
// ratio, not a timed assertion: shared machines are noisy).
func BenchmarkLowerVsParse(b *testing.B) {
	src := benchSource(40)
	root := parseBench(b, src)
	p := syntax.NewParser(syntax.Limits{Timeout: time.Minute})
	defer p.Close()
	var parse, lower time.Duration
	for b.Loop() {
		start := time.Now()
		if err := p.ParseOnly(syntax.Python, src); err != nil {
			b.Fatal(err)
		}
		parse += time.Since(start)
		start = time.Now()
		if _, err := Lower("bench/bench.py", src, root); err != nil {
			b.Fatal(err)
		}
		lower += time.Since(start)
	}
	b.ReportMetric(float64(lower)/float64(parse), "x-parse")
}
