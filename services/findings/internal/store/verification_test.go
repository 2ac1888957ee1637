package store

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestConfidence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		tags    []string
		desc    string
		level   string
		reasons []string
	}{
		{"none", []string{"CWE-89"}, "SQL injection.", "", nil},
		{"tag and paragraph", []string{"CWE-89", "confidence:high"},
			"SQL injection.\n\nWhy we report this (confidence: high):\n- Untrusted request data reaches the sink.\n- Not in tests.",
			"high", []string{"Untrusted request data reaches the sink.", "Not in tests."}},
		{"paragraph only", nil, "Why we report this (confidence: low):\n- It is in test code.", "low", []string{"It is in test code."}},
		{"the last paragraph counts", []string{"confidence:medium"},
			"Text quoting \n\nWhy we report this (confidence: high):\n- old\n\nWhy we report this (confidence: medium):\n- Pattern only.",
			"medium", []string{"Pattern only."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			level, reasons := Confidence(tc.tags, tc.desc)
			require.Equal(t, tc.level, level)
			require.Equal(t, tc.reasons, reasons)
		})
	}
}

func TestListForReviewAndVerificationCounts(t *testing.T) {
	u := newUnit(t)
	ctx, s, org, other := u.ctx, u.s, u.org, uuid.NewString()
	sc := Scan{ID: uuid.NewString(), OrgID: org, RepoURL: "https://git.example.com/acme/app", ScanType: "full"}
	sx := Scan{ID: uuid.NewString(), OrgID: other, RepoURL: "https://git.example.com/acme/app", ScanType: "full"}
	for _, x := range []Scan{sc, sx} {
		_, err := s.RegisterScan(ctx, x)
		require.NoError(t, err)
	}
	f := func(fp string, verified bool, level string) Reported {
		return Reported{Fingerprint: fp, Title: "t " + fp, Category: "injection", Severity: "high", AffectedFile: "a.py", StartLine: 3, EndLine: 3,
			Tags: []string{"confidence:" + level}, Description: "D.\n\nWhy we report this (confidence: " + level + "):\n- because " + fp + ".",
			Verified: verified}
	}
	res, err := s.Report(ctx, sc, []Reported{f("a", true, "high"), f("b", false, "medium"), f("c", false, "low")}, true)
	require.NoError(t, err)
	_, err = s.Report(ctx, sx, []Reported{f("x", false, "low")}, true)
	require.NoError(t, err)
	ids := map[string]string{}
	for _, r := range res {
		ids[r.Fingerprint] = r.FindingID
	}
	_, err = s.SetVerification(ctx, ids["c"], Rejected)
	require.NoError(t, err)

	pending, err := s.ListForReview(ctx, OperatorQuery{ScanID: sc.ID, Status: Pending})
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.Equal(t, ids["b"], pending[0].ID)
	require.Equal(t, "medium", pending[0].Confidence)
	require.Equal(t, []string{"because b."}, pending[0].Reasons)
	require.EqualValues(t, 3, pending[0].StartLine)

	byOrg, err := s.ListForReview(ctx, OperatorQuery{OrgID: org, IncludeUnverified: true})
	require.NoError(t, err)
	require.Len(t, byOrg, 3, "only the organization's findings")
	approved, err := s.ListForReview(ctx, OperatorQuery{ScanID: sc.ID})
	require.NoError(t, err)
	require.Len(t, approved, 1)
	require.Equal(t, "high", approved[0].Confidence)

	counts, err := s.VerificationCounts(ctx, org, []string{sc.ID, sx.ID})
	require.NoError(t, err)
	require.Equal(t, map[string]int64{Approved: 1, Pending: 1, Rejected: 1}, counts[sc.ID])
	require.Empty(t, counts[sx.ID], "another organization's scan is not counted")
}
