package service

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// A refused field is named with its place in the batch, whichever check
// refused it.
func TestReportedNamesTheRefusedField(t *testing.T) {
	t.Parallel()
	ok := func() *findingsv1.ReportedFinding {
		return &findingsv1.ReportedFinding{Fingerprint: "fp", Title: "t", Category: "injection", Severity: "high", AffectedFile: "a.go"}
	}
	tests := []struct {
		name  string
		edit  func(f *findingsv1.ReportedFinding)
		field string
	}{
		{"fingerprint too long", func(f *findingsv1.ReportedFinding) { f.Fingerprint = strings.Repeat("f", 257) }, "findings[7].fingerprint"},
		{"title too long", func(f *findingsv1.ReportedFinding) { f.Title = strings.Repeat("t", 501) }, "findings[7].title"},
		{"file too long", func(f *findingsv1.ReportedFinding) { f.AffectedFile = strings.Repeat("a", 4097) }, "findings[7].affected_file"},
		{"description too long", func(f *findingsv1.ReportedFinding) { f.Description = strings.Repeat("d", 100001) }, "findings[7].description"},
		{"code too long", func(f *findingsv1.ReportedFinding) { f.AffectedCode = strings.Repeat("c", 100001) }, "findings[7].affected_code"},
		{"category", func(f *findingsv1.ReportedFinding) { f.Category = "nope" }, "findings[7].category"},
		{"severity", func(f *findingsv1.ReportedFinding) { f.Severity = "nope" }, "findings[7].severity"},
	}
	for _, tc := range tests {
		f := ok()
		tc.edit(f)
		_, err := reported(7, f)
		require.Error(t, err, tc.name)
		require.True(t, strings.HasPrefix(err.Error(), tc.field+" "), "%s: %v", tc.name, err)
	}
	_, err := reported(7, ok())
	require.NoError(t, err)
}
