package golang

import (
	"bytes"
	"context"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// BenchmarkLowerGo measures the lowering alone (the tree is parsed once) of
// a large file made of the golden snippets, and reports lines per second.
func BenchmarkLowerGo(b *testing.B) {
	// One large file of many copies of the function bodies (package clause
	// and imports once).
	var body bytes.Buffer
	body.WriteString("package bench\nimport (\n\"fmt\"\n\"net/http\"\n\"os\"\n)\n")
	for i := 0; i < 200; i++ {
		for _, tc := range goldenCases {
			s := tc.src
			if j := bytes.Index([]byte(s), []byte("\nfunc ")); j >= 0 {
				s = s[j:]
			}
			body.WriteString(s)
		}
	}
	src := body.Bytes()
	p := syntax.NewParser(syntax.Limits{})
	defer p.Close()
	root, _, err := p.Parse(context.Background(), syntax.Go, src)
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Count(src, []byte("\n"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Lower("bench/bench.go", src, root); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
