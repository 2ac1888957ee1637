package golang

import (
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// FuzzLowerGo lowers arbitrary input: whatever tree-sitter makes of it, the
// lowering must not panic and must produce valid IR.
func FuzzLowerGo(f *testing.F) {
	var seeds []string
	for _, tc := range goldenCases {
		seeds = append(seeds, tc.src)
	}
	lowertest.Fuzz(f, syntax.Go, "fuzz/input.go", Lower, corpusFiles(f), seeds)
}
