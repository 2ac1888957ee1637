package php

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// BenchmarkLowerPHP measures the lowering alone (the tree is parsed once) of
// a large file made of the golden snippets, and reports lines per second.
func BenchmarkLowerPHP(b *testing.B) {
	var body bytes.Buffer
	body.WriteString("<?php\n")
	for i := 0; i < 200; i++ {
		for _, tc := range goldenCases {
			if strings.Contains(tc.src, "namespace") || !strings.HasPrefix(tc.src, "<?php") {
				continue
			}
			body.WriteString(strings.TrimPrefix(tc.src, "<?php"))
		}
	}
	src := body.Bytes()
	p := syntax.NewParser(syntax.Limits{})
	defer p.Close()
	root, _, err := p.Parse(context.Background(), syntax.PHP, src)
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Count(src, []byte("\n"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Lower("bench/bench.php", src, root); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
