package service

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// TestIntakeAcceptsTheEngineVocabulary pins what the engine reports to what
// intake accepts: every category and severity of pkg/vocab (the words the
// engine's rules are checked against when they load) is accepted, and
// anything else is a 400 naming the field.
func TestIntakeAcceptsTheEngineVocabulary(t *testing.T) {
	t.Parallel()
	base := func(category, severity string) *findingsv1.ReportedFinding {
		f := finding.Finding{Title: "t", Category: category, Severity: severity, AffectedFile: "a.go", FingerprintKey: "k"}
		return &findingsv1.ReportedFinding{Fingerprint: "fp", Title: f.Title, Category: f.Category, Severity: f.Severity, AffectedFile: f.AffectedFile}
	}
	for _, c := range vocab.Categories.Values() {
		for _, s := range vocab.Severities.Values() {
			_, err := reported(0, base(string(c), string(s)))
			require.NoError(t, err, "%s/%s", c, s)
		}
	}
	_, err := reported(2, base("sqli", "high"))
	require.ErrorContains(t, err, "findings[2].category must be one of")
	_, err = reported(0, base("injection", "severe"))
	require.ErrorContains(t, err, "findings[0].severity must be one of")
}
