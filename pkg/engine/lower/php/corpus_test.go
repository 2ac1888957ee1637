package php

import (
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// TestLowerCorpus lowers every PHP file of the labelled corpus and validates
// the IR (lowerSource validates).
func TestLowerCorpus(t *testing.T) {
	t.Parallel()
	lowertest.LowerCorpus(t, "php", syntax.PHP, Lower)
}

// corpusFiles lists the PHP files of the labelled corpus.
func corpusFiles(t testing.TB) []string { return lowertest.CorpusFiles(t, "php") }
