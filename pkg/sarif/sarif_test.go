package sarif

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/sarif/sariftest"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	dup := "7f1d1c9e-4d7b-4f43-9a55-2b8f3f3a0c11"
	tests := []struct {
		name     string
		findings []Finding
		rules    []string
		guids    bool
	}{
		{"empty", nil, []string{}, false},
		{"local run: no ids", []Finding{
			{Title: "Shell", Category: "injection", Severity: "high", State: "open", AffectedFile: "app.py", StartLine: 3, EndLine: 3,
				Tags: []string{"python.cmdi.shell", "CWE-78", "confidence:high"}, Fingerprint: "fp1", Description: "Input reaches a shell."},
			{Title: "Shell again", Category: "injection", Severity: "critical", State: "open", AffectedFile: "b.py", StartLine: 9, EndLine: 8,
				Tags: []string{"python.cmdi.shell"}, Fingerprint: "fp2"},
			{Title: "No detector", Category: "weird", Severity: "info", State: "open", AffectedFile: "c.py", Fingerprint: "fp3"},
		}, []string{"python.cmdi.shell", "other"}, false},
		{"server export: ids, suppressions, duplicates", []Finding{
			{ID: "01a20a88-f080-7f11-9a4b-acfd912b9ff6", ScanID: "3c1d2e4f-9b0e-4a53-8f66-5f3e1f3e2a10", Title: "SQL", Category: "injection",
				Severity: "medium", State: "false_positive", AffectedFile: "db.go", AffectedCode: "q := x", StartLine: 1, EndLine: 2,
				Tags: []string{"go.sqli.concat"}, Fingerprint: "fp4", DuplicateOf: &dup},
		}, []string{"go.sqli.concat"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			require.NoError(t, Write(&buf, tc.findings))
			sariftest.Validate(t, buf.Bytes())

			var log struct {
				Runs []struct {
					Results []map[string]any `json:"results"`
					Tool    struct {
						Driver struct {
							Rules []struct {
								ID         string         `json:"id"`
								Properties map[string]any `json:"properties"`
							} `json:"rules"`
						} `json:"driver"`
					} `json:"tool"`
				} `json:"runs"`
			}
			require.NoError(t, json.Unmarshal(buf.Bytes(), &log))
			require.Len(t, log.Runs, 1)
			ids := []string{}
			for _, r := range log.Runs[0].Tool.Driver.Rules {
				ids = append(ids, r.ID)
			}
			require.Equal(t, tc.rules, ids)
			require.Len(t, log.Runs[0].Results, len(tc.findings))
			for i, r := range log.Runs[0].Results {
				require.Equal(t, tc.findings[i].Fingerprint, r["partialFingerprints"].(map[string]any)["vulnscanFingerprint/v1"])
				guid, hasGUID := r["guid"]
				require.Equal(t, tc.guids, hasGUID)
				if hasGUID {
					// A version 5 guid derived from the (version 7) finding id,
					// which the properties carry.
					require.Equal(t, ResultGUID(tc.findings[i].ID), guid)
					require.Equal(t, tc.findings[i].ID, r["properties"].(map[string]any)["finding_id"])
				}
				if tc.findings[i].State == "false_positive" {
					require.NotEmpty(t, r["suppressions"])
				}
			}
			if len(ids) > 0 && ids[0] == "python.cmdi.shell" {
				require.Equal(t, "9.5", log.Runs[0].Tool.Driver.Rules[0].Properties["security-severity"], "the highest severity of the rule's results")
			}
		})
	}
}

// A result's guid is a version 5 UUID (SARIF 2.1.0's schema takes versions
// 1 to 5), the same for a finding id every time and distinct across ids.
func TestResultGUID(t *testing.T) {
	t.Parallel()
	a, b := "01a20a88-f080-7f11-9a4b-acfd912b9ff6", "01a20a88-f080-7e87-b412-ade2c0975d17"
	ga, err := uuid.Parse(ResultGUID(a))
	require.NoError(t, err)
	require.Equal(t, uuid.Version(5), ga.Version())
	require.Equal(t, ResultGUID(a), ResultGUID(a))
	require.NotEqual(t, ResultGUID(a), ResultGUID(b))
}

// TestArtifactURIs: a file path becomes a valid URI reference that decodes
// back to it, so that a log holding paths with spaces, "%", "#", "?", a
// colon or characters outside ASCII still validates (code scanning refuses
// the whole log otherwise).
func TestArtifactURIs(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"src/app.py":                    "src/app.py",
		"Secrets/Access Tokens/main.tf": "Secrets/Access%20Tokens/main.tf",
		"src/100%/pay.go":               "src/100%25/pay.go",
		"web/a#b?c.js":                  "web/a%23b%3Fc.js",
		"c:x.py":                        "./c:x.py",
		"caf\u00e9/\u00fc.py":           "caf%C3%A9/%C3%BC.py",
		"packages/@scope/[id]/page.tsx": "packages/@scope/%5Bid%5D/page.tsx",
	} {
		got := ArtifactURI(path)
		require.Equal(t, want, got, path)
		u, err := url.Parse(got)
		require.NoError(t, err, got)
		require.Equal(t, path, strings.TrimPrefix(u.Path, "./"), "decodes back")

		var buf bytes.Buffer
		require.NoError(t, Write(&buf, []Finding{{Title: "Shell", Category: "injection", Severity: "high", State: "open",
			AffectedFile: path, StartLine: 1, Tags: []string{"python.cmdi.shell"}, Fingerprint: "fp"}}))
		sariftest.Validate(t, buf.Bytes())
	}
}
