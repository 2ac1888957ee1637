package jobs

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine"
)

func TestConfidencePresentation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		f        engine.Finding
		tags     []string
		describe string
	}{
		{"no confidence", engine.Finding{Description: "SQL injection.", Tags: []string{"CWE-89"}}, []string{"CWE-89"}, "SQL injection."},
		{"high with reasons", engine.Finding{Description: "SQL injection.\n", Tags: []string{"CWE-89"}, Confidence: "high",
			Reasons: []string{"Untrusted request data reaches the sink.", "The sink is identified\nby its type."}},
			[]string{"CWE-89", "confidence:high"},
			"SQL injection.\n\nWhy we report this (confidence: high):\n- Untrusted request data reaches the sink.\n- The sink is identified by its type."},
		{"a stale confidence tag is replaced", engine.Finding{Tags: []string{"confidence:low", "x"}, Confidence: "medium", Reasons: []string{"Pattern only."}},
			[]string{"x", "confidence:medium"}, "Why we report this (confidence: medium):\n- Pattern only."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.tags, Tags(tc.f))
			require.Equal(t, tc.describe, Describe(tc.f))
		})
	}
}
