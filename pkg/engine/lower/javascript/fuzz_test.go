package javascript

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// fuzzLower parses and lowers arbitrary input and checks that lowering
// neither panics nor produces invalid IR.
func fuzzLower(f *testing.F, lang *syntax.Lang, path string, exts ...string) {
	for _, p := range corpusFiles(f) {
		for _, e := range exts {
			if strings.HasSuffix(p, e) {
				if src, err := os.ReadFile(p); err == nil {
					f.Add(src)
				}
			}
		}
	}
	for _, tc := range goldenCases {
		for _, e := range exts {
			if strings.HasSuffix(tc.path, e) {
				f.Add([]byte(tc.src))
			}
		}
	}
	p := syntax.NewParser(syntax.Limits{MaxDepth: 200, MaxNodes: 200_000})
	f.Cleanup(p.Close)
	f.Fuzz(func(t *testing.T, src []byte) {
		root, _, err := p.Parse(context.Background(), lang, src)
		if err != nil {
			return // too deep, too large: skipped before lowering
		}
		file, err := Lower(path, src, root)
		if err != nil {
			t.Fatalf("lower: %v", err)
		}
		if err := ir.ValidateFile(file); err != nil {
			t.Fatalf("invalid IR: %v", err)
		}
	})
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
