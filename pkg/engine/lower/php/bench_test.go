package php

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
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
	lowertest.Bench(b, syntax.PHP, Lower, "bench/bench.php", body.Bytes())
}
