package php

import (
	"os"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"

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
func corpusFiles(t testing.TB) []string { return lowertest.CorpusFiles(t, "php") }
