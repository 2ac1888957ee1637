package php

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLowerCorpus lowers every PHP file of the labelled corpus and validates
// the IR (lowerSource validates).
func TestLowerCorpus(t *testing.T) {
	t.Parallel()
	files := corpusFiles(t)
	require.NotEmpty(t, files)
	for _, file := range files {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		f := lowerSource(t, string(src))
		require.NotNil(t, f.Init, file)
	}
}

// corpusFiles lists the PHP files of the labelled corpus.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	root := filepath.Join("..", "..", "testdata", "corpus", "php")
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".php") || strings.HasSuffix(p, ".phtml")) {
			out = append(out, p)
		}
		return err
	})
	require.NoError(t, err)
	return out
}
