package e2e

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/sarif"
	"github.com/vulnscan/vulnscan/pkg/sarif/sariftest"
)

// The SARIF export validates against the official schema and is what code
// scanning tools show well: one rule per detector with help text and
// security-severity, a stable ruleId, suppressions for triaged findings and
// a documented path root.
func TestSARIFExport(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	scan := newScan(t, o, "https://git.example.com/acme/sarif")
	u := uuid.NewString()[:8]
	a := fnd("shell-a"+u, "high")
	a.Tags = []string{"python.cmdi.shell", "CWE-78", "A03:2021-Injection", "python", "confidence:high"}
	a.Description = "User input reaches a shell command.\n\nWhy we report this (confidence: high):\n- a complete flow"
	b := fnd("shell-b"+u, "critical")
	b.Tags, b.Description = a.Tags, a.Description
	c := fnd("sqli"+u, "medium")
	c.Tags = []string{"python.sqli.format", "CWE-89", "A03:2021-Injection", "python"}
	d := fnd("plain"+u, "low")
	d.Category = "xss"
	ids := report(t, scan, a, b, c, d)
	require.Equal(t, 200, do(t, "PATCH", "/findings/"+ids[0], o.WriteKey, map[string]any{"state": "false_positive"}).Status)
	require.Equal(t, 200, do(t, "PATCH", "/findings/"+ids[2], o.WriteKey, map[string]any{"state": "accepted_risk"}).Status)

	r := do(t, "GET", "/scans/"+scan+"/findings/export?format=sarif", o.ReadKey, nil)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	sariftest.Validate(t, r.Body)

	log := r.JSON()
	run := log["runs"].([]any)[0].(map[string]any)
	require.Contains(t, run["originalUriBaseIds"], "%SRCROOT%")
	rules := run["tool"].(map[string]any)["driver"].(map[string]any)["rules"].([]any)
	byID := map[string]map[string]any{}
	for _, x := range rules {
		rule := x.(map[string]any)
		require.NotContains(t, byID, rule["id"], "one rule per detector")
		byID[rule["id"].(string)] = rule
		help := rule["help"].(map[string]any)
		require.NotEmpty(t, help["text"])
		require.NotEmpty(t, help["markdown"])
		require.NotEmpty(t, rule["properties"].(map[string]any)["security-severity"])
	}
	require.Len(t, byID, 3)
	shell := byID["python.cmdi.shell"]
	require.Equal(t, "9.5", shell["properties"].(map[string]any)["security-severity"], "the highest severity of the rule's results")
	require.Contains(t, shell["properties"].(map[string]any)["tags"], "external/cwe/cwe-78")
	require.Equal(t, "User input reaches a shell command.", shell["fullDescription"].(map[string]any)["text"])
	require.Contains(t, byID, "python.sqli.format")
	require.Contains(t, byID, "xss", "a finding without a detector tag falls back to its category")

	results := run["results"].([]any)
	require.Len(t, results, 4)
	for _, x := range results {
		res := x.(map[string]any)
		rule := rules[int(res["ruleIndex"].(float64))].(map[string]any)
		require.Equal(t, rule["id"], res["ruleId"])
		require.NotContains(t, res["properties"], "security-severity", "security-severity sits on the rule")
		loc := res["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)["artifactLocation"].(map[string]any)
		require.Equal(t, "%SRCROOT%", loc["uriBaseId"])
		require.Equal(t, sarif.ResultGUID(res["properties"].(map[string]any)["finding_id"].(string)), res["guid"])
		switch res["properties"].(map[string]any)["finding_id"] {
		case ids[0], ids[2]:
			sup := res["suppressions"].([]any)
			require.Len(t, sup, 1)
			s := sup[0].(map[string]any)
			require.Equal(t, "external", s["kind"])
			require.Equal(t, "accepted", s["status"])
			require.NotEmpty(t, s["justification"])
		default:
			require.NotContains(t, res, "suppressions")
		}
	}

	// An empty export is valid SARIF too.
	empty := newScan(t, o, "https://git.example.com/acme/empty")
	r = do(t, "GET", "/scans/"+empty+"/findings/export?format=sarif", o.ReadKey, nil)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	sariftest.Validate(t, r.Body)
}
