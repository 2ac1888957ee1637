package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// withConfidence marks a reported finding the way the scan worker does.
func withConfidence(f *findingsv1.ReportedFinding, level string, reasons ...string) *findingsv1.ReportedFinding {
	f.Verified = level == "high"
	f.Tags = append(f.Tags, "confidence:"+level)
	f.Description += "\n\nWhy we report this (confidence: " + level + "):"
	for _, r := range reasons {
		f.Description += "\n- " + r
	}
	return f
}

func TestOperatorReview(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	other := newOrg(t, "auto")
	scan := newScan(t, o, "https://git.example.com/acme/review")
	ids := report(t, scan,
		withConfidence(fnd("r1", "high"), "high", "Untrusted request data reaches the sink.", "Not in tests."),
		withConfidence(fnd("r2", "medium"), "medium", "Matched by a syntactic pattern only."),
		withConfidence(fnd("r3", "low"), "low", "It is in test, example or fixture code."))
	require.Equal(t, 200, do(t, "GET", "/findings/"+ids[0], o.ReadKey, nil).Status, "auto mode approves high confidence")
	for _, id := range ids[1:] {
		requireError(t, do(t, "GET", "/findings/"+id, o.ReadKey, nil), 404, "Finding not found")
	}

	out, err := sys.Ctl("finding", "list", "--scan", scan, "--pending")
	require.NoError(t, err)
	data := out["data"].([]any)
	require.Len(t, data, 2)
	got := map[string]map[string]any{}
	for _, x := range data {
		f := x.(map[string]any)
		got[f["id"].(string)] = f
		require.Equal(t, "pending", f["verification_status"])
	}
	require.Equal(t, "medium", got[ids[1]]["confidence"])
	require.Equal(t, []any{"Matched by a syntactic pattern only."}, got[ids[1]]["reasons"])
	require.Equal(t, "low", got[ids[2]]["confidence"])
	require.EqualValues(t, 10, got[ids[2]]["start_line"])

	byOrg, err := sys.Ctl("finding", "list", "--org", o.ID, "--pending")
	require.NoError(t, err)
	require.Len(t, byOrg["data"], 2)
	none, err := sys.Ctl("finding", "list", "--org", other.ID, "--pending")
	require.NoError(t, err)
	require.Empty(t, none["data"])
	approvedOnly, err := sys.Ctl("finding", "list", "--scan", scan)
	require.NoError(t, err)
	require.Len(t, approvedOnly["data"], 1)
	require.Equal(t, "high", approvedOnly["data"].([]any)[0].(map[string]any)["confidence"])
	for _, args := range [][]string{{"finding", "list", "--pending"}, {"finding", "list", "--scan", scan, "--org", o.ID}} {
		_, err := sys.Ctl(args...)
		require.Error(t, err, "%v", args)
	}
	_, err = intake.ListFindingsForOperator(ctx(t), &findingsv1.ListFindingsForOperatorRequest{ScanId: scan, VerificationStatus: "held"})
	require.Error(t, err, "an unknown verification status is refused")

	counts := func() *findingsv1.VerificationCounts {
		r, err := intake.GetScanSummaries(ctx(t), &findingsv1.GetScanSummariesRequest{OrgId: o.ID, ScanIds: []string{scan}, WithVerification: true})
		require.NoError(t, err)
		return r.GetSummaries()[0].GetVerification()
	}
	c := counts()
	require.Equal(t, []int32{3, 1, 2, 0}, []int32{c.GetCandidates(), c.GetApproved(), c.GetHeld(), c.GetRejected()})
	_, err = sys.Ctl("finding", "approve", "--id", ids[1])
	require.NoError(t, err)
	_, err = sys.Ctl("finding", "reject", "--id", ids[2])
	require.NoError(t, err)
	c = counts()
	require.Equal(t, []int32{3, 2, 0, 1}, []int32{c.GetCandidates(), c.GetApproved(), c.GetHeld(), c.GetRejected()})
	f := get(t, o.ReadKey, ids[1])
	require.Contains(t, f["tags"], "confidence:medium")
	require.Contains(t, f["description"], "Why we report this (confidence: medium):\n- Matched by a syntactic pattern only.")
	plain, err := intake.GetScanSummaries(ctx(t), &findingsv1.GetScanSummariesRequest{OrgId: o.ID, ScanIds: []string{scan}})
	require.NoError(t, err)
	require.Nil(t, plain.GetSummaries()[0].GetVerification(), "counted only when asked")
	foreign, err := intake.GetScanSummaries(ctx(t), &findingsv1.GetScanSummariesRequest{OrgId: other.ID, ScanIds: []string{scan}, WithVerification: true})
	require.NoError(t, err)
	require.Zero(t, foreign.GetSummaries()[0].GetVerification().GetCandidates(), "another organization's counts are never given")
}
