package javascript

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
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
	lowertest.Bench(b, syntax.JavaScript, Lower, "src/bench.js", []byte(sb.String()))
}
