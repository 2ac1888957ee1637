package finding

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReportText: every text a finding reports comes out valid UTF-8
// without NUL (ISO-8859-1 read as such), the engine's own slices untouched.
func TestReportText(t *testing.T) {
	t.Parallel()
	poc, trace := "curl 'x?q=caf\xe9'", "graph TD; A[\x00]-->B"
	tags := []string{"python.cmdi.shell", "caf\xe9"}
	reasons := []string{"flows from r\xe9pertoire"}
	f := Finding{Title: "T\x00", Category: "injection", Severity: "high", Description: "d\xe9j\xe0", AffectedFile: "caf\xe9.py",
		AffectedCode: "# r\xe9pertoire\x00", Fingerprint: "abc", ProofOfConcept: &poc, MermaidTrace: &trace, Tags: tags, Reasons: reasons, Confidence: "high"}
	got := ReportText(f)
	require.Equal(t, "T\uFFFD", got.Title)
	require.Equal(t, "déjà", got.Description)
	require.Equal(t, "café.py", got.AffectedFile)
	require.Equal(t, "# répertoire\uFFFD", got.AffectedCode)
	require.Equal(t, "curl 'x?q=café'", *got.ProofOfConcept)
	require.Equal(t, "graph TD; A[\uFFFD]-->B", *got.MermaidTrace)
	require.Equal(t, []string{"python.cmdi.shell", "café"}, got.Tags)
	require.Contains(t, ReportDescription(got), "flows from répertoire")
	// The engine's finding is as it was.
	require.Equal(t, "caf\xe9", tags[1])
	require.Equal(t, "flows from r\xe9pertoire", reasons[0])
	require.Equal(t, "curl 'x?q=caf\xe9'", poc)
	// Text that is fit already is kept as it is, slices included.
	clean := Finding{Title: "SQL injection", Tags: []string{"a"}}
	require.Equal(t, &clean.Tags[0], &ReportText(clean).Tags[0])
}
