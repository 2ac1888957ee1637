package javascript

import (
	"slices"
	"strings"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// fuzzLower parses and lowers arbitrary input and checks that lowering
// neither panics nor produces invalid IR.
func fuzzLower(f *testing.F, lang *syntax.Lang, path string, exts ...string) {
	hasExt := func(p string) bool {
		return slices.ContainsFunc(exts, func(e string) bool { return strings.HasSuffix(p, e) })
	}
	files := slices.DeleteFunc(corpusFiles(f), func(p string) bool { return !hasExt(p) })
	var seeds []string
	for _, tc := range goldenCases {
		if hasExt(tc.path) {
			seeds = append(seeds, tc.src)
		}
	}
	lowertest.Fuzz(f, lang, path, Lower, files, seeds)
}

func FuzzLowerJavaScript(f *testing.F) {
	fuzzLower(f, syntax.JavaScript, "src/fuzz.js", ".js", ".jsx")
}

func FuzzLowerTypeScript(f *testing.F) {
	fuzzLower(f, syntax.TypeScript, "src/fuzz.ts", ".ts")
}

func FuzzLowerTSX(f *testing.F) {
	fuzzLower(f, syntax.TSX, "src/fuzz.tsx", ".tsx", ".jsx")
}
