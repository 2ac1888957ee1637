package php

import (
	"context"
	"os"
	"testing"

	"github.com/vulnscan/vulnscan/services/scan/internal/engine/ir"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/syntax"
)

// FuzzLowerPHP lowers arbitrary input: whatever tree-sitter makes of it, the
// lowering must not panic and must produce valid IR.
func FuzzLowerPHP(f *testing.F) {
	for _, file := range corpusFiles(f) {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, tc := range goldenCases {
		f.Add([]byte(tc.src))
	}
	p := syntax.NewParser(syntax.Limits{MaxDepth: 200})
	f.Fuzz(func(t *testing.T, src []byte) {
		root, _, err := p.Parse(context.Background(), syntax.PHP, src)
		if err != nil {
			return
		}
		file, err := Lower("fuzz/input.php", src, root)
		if err != nil {
			t.Fatal(err)
		}
		if err := ir.ValidateFile(file); err != nil {
			t.Fatalf("%v\n%s", err, ir.Dump(file))
		}
	})
}
