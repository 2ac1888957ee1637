// Package lowertest holds what the front ends' tests share.
package lowertest

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

var update = flag.Bool("update", false, "rewrite the golden IR files under testdata/golden")

// LowerFunc is a front end's entry point.
type LowerFunc func(path string, src []byte, root *syntax.Node) (*ir.File, error)

// Fuzz lowers arbitrary input: whatever tree-sitter makes of it, the
// lowering must not panic and must produce valid IR. Seeds are the given
// files and sources.
func Fuzz(f *testing.F, lang *syntax.Lang, path string, lower LowerFunc, files []string, sources []string) {
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, s := range sources {
		f.Add([]byte(s))
	}
	p := syntax.NewParser(syntax.Limits{MaxDepth: 200, MaxNodes: 200_000})
	f.Cleanup(p.Close)
	f.Fuzz(func(t *testing.T, src []byte) {
		root, _, err := p.Parse(context.Background(), lang, src)
		if err != nil {
			return
		}
		file, err := lower(path, src, root)
		if err != nil {
			t.Fatal(err)
		}
		if err := ir.ValidateFile(file); err != nil {
			t.Fatalf("%v\n%s", err, ir.Dump(file))
		}
	})
}

// Lower parses src and lowers it with lower, failing the test on any error
// and on IR that does not validate.
func Lower(t testing.TB, lang *syntax.Lang, lower LowerFunc, path string, src []byte) *ir.File {
	t.Helper()
	p := syntax.NewParser(syntax.Limits{})
	defer p.Close()
	root, _, err := p.Parse(context.Background(), lang, src)
	require.NoError(t, err)
	f, err := lower(path, src, root)
	require.NoError(t, err)
	require.NoError(t, ir.ValidateFile(f), path)
	return f
}

// CorpusFiles lists the source files of the labelled corpus of one language
// directory (testdata/corpus/<dir> of the engine).
func CorpusFiles(t testing.TB, dir string) []string {
	t.Helper()
	root := filepath.Join("..", "..", "testdata", "corpus", dir)
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && syntax.LangFor(p) != nil {
			out = append(out, p)
		}
		return err
	})
	require.NoError(t, err)
	require.NotEmpty(t, out, "corpus %s", dir)
	return out
}

// Golden compares the IR dump of f with testdata/golden/<name>.ir; with
// go test -update it rewrites that file instead.
func Golden(t *testing.T, name string, f *ir.File) {
	t.Helper()
	got := ir.Dump(f)
	file := filepath.Join("testdata", "golden", name+".ir")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(file)
	require.NoError(t, err, "missing %s: run go test -run TestLowerGolden -update", file)
	require.Equal(t, string(want), got)
}

// LowerCorpus lowers every file of the labelled corpus of one language
// directory with lower, as its path below that directory and parsed as
// lang (nil: the language its name says), and checks that each gives valid
// IR holding code.
func LowerCorpus(t *testing.T, dir string, lang *syntax.Lang, lower LowerFunc) {
	t.Helper()
	root := filepath.Join("..", "..", "testdata", "corpus", dir)
	for _, file := range CorpusFiles(t, dir) {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		rel, err := filepath.Rel(root, file)
		require.NoError(t, err)
		l := lang
		if l == nil {
			l = syntax.LangFor(file)
		}
		f := Lower(t, l, lower, filepath.ToSlash(rel), src)
		require.True(t, f.Init != nil || len(f.Funcs) > 0, "no code lowered from %s", file)
	}
}

// Bench measures lower on src alone (the tree is parsed once, as lang,
// before the timer starts) and reports source lines lowered per second.
func Bench(b *testing.B, lang *syntax.Lang, lower LowerFunc, path string, src []byte) {
	p := syntax.NewParser(syntax.Limits{Timeout: time.Minute})
	defer p.Close()
	root, _, err := p.Parse(context.Background(), lang, src)
	require.NoError(b, err)
	lines := bytes.Count(src, []byte("\n"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := lower(path, src, root); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
