package golang

import (
	"bytes"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
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
	lowertest.Bench(b, syntax.Go, Lower, "bench/bench.go", body.Bytes())
}
