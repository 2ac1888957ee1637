package store

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
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

// TestVerificationCountsReadOnlyUnapproved checks that counting a scan's
// findings by verification status reads only its findings that are not
// approved, whatever else the organization holds, with either plan (see
// planModes): a scan's summary, which clients poll while it runs, must not
// read a large organization's findings.
func TestVerificationCountsReadOnlyUnapproved(t *testing.T) {
	u := newUnit(t)
	large := u.scan("https://git.example.com/acme/large")
	u.reportMany(large, 1200, func(i int) Reported {
		return Reported{Fingerprint: fmt.Sprintf("fp-%05d", i), Title: "t", Category: "injection", Severity: "high", Verified: i%10 != 0}
	})
	sc := u.scan("https://git.example.com/acme/app")
	batch := []Reported{}
	for i, verified := range []bool{true, true, true, false, false, false} {
		batch = append(batch, Reported{Fingerprint: fmt.Sprintf("app-%d", i), Title: "t", Category: "injection", Severity: "low", Verified: verified})
	}
	res, err := u.s.Report(u.ctx, sc, batch, true)
	require.NoError(t, err)
	_, err = u.s.SetVerification(u.ctx, res[5].FindingID, Rejected)
	require.NoError(t, err)
	_, err = u.s.SetVerification(u.ctx, res[0].FindingID, Rejected)
	require.NoError(t, err)

	want := map[string]map[string]int64{
		sc.ID:    {Approved: 2, Pending: 2, Rejected: 2},
		large.ID: {Approved: 1080, Pending: 120},
	}
	got, err := u.s.VerificationCounts(u.ctx, u.org, []string{sc.ID, large.ID})
	require.NoError(t, err)
	require.Equal(t, want, got)

	for _, mode := range planModes {
		t.Run(mode, func(t *testing.T) {
			p := u.prepare(t, mode, "verification_counts", "uuid, uuid[]", verificationCountsSQL, u.org, "{"+sc.ID+"}")
			assert.Equal(t, float64(4), findingsRead(p), "findings rows read: the scan's four findings that are not approved")
		})
	}
}
