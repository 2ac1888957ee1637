package ruby

import (
	"context"
	"os"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// FuzzLowerRuby lowers arbitrary input: no panic, and the IR validates.
func FuzzLowerRuby(f *testing.F) {
	for _, p := range corpusFiles(f) {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte("x = <<~A\n#{<<~B}\nB\nA\n"))
	f.Add([]byte("case x\nin {a: [*, 1 => b, *]} then b\nend\n"))
	p := syntax.NewParser(syntax.Limits{MaxDepth: 200, MaxNodes: 100_000})
	f.Fuzz(func(t *testing.T, src []byte) {
		root, _, err := p.Parse(context.Background(), syntax.Ruby, src)
		if err != nil {
			return
		}
		file, err := Lower("fuzz.rb", src, root)
		if err != nil {
			t.Fatal(err)
		}
		if err := ir.ValidateFile(file); err != nil {
			t.Fatalf("%v\n%s", err, ir.Dump(file))
		}
	})
}
