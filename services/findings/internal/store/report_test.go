package store

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestReportResults checks what Report says about each entry of a batch,
// in batch order: created, seen again, repeated within the batch, reopened.
func TestReportResults(t *testing.T) {
	u := newUnit(t)
	ctx, s, org, pool := u.ctx, u.s, u.org, u.s.Pool
	first := Scan{ID: uuid.NewString(), OrgID: org, RepoURL: "https://git.example.com/acme/app", ScanType: "full"}
	second := Scan{ID: uuid.NewString(), OrgID: org, RepoURL: "https://git.example.com/acme/app.git", ScanType: "pr"}
	for _, sc := range []Scan{first, second} {
		_, err := s.RegisterScan(ctx, sc)
		require.NoError(t, err)
	}
	rep := func(fp string, verified bool) Reported {
		return Reported{Fingerprint: fp, Title: "t " + fp, Category: "xss", Severity: "high", Verified: verified}
	}
	res, err := s.Report(ctx, first, []Reported{rep("b", true), rep("a", false), rep("c", true)}, true)
	require.NoError(t, err)
	ids := map[string]string{}
	for _, r := range res {
		ids[r.Fingerprint] = r.FindingID
	}
	resolved := "resolved"
	_, err = s.Apply(ctx, org, ids["c"], Update{State: &resolved}, Actor{UserID: uuid.NewString(), Username: "ana", Source: "api"})
	require.NoError(t, err)

	type want struct {
		fp, status        string
		created, reopened bool
	}
	tests := []struct {
		name  string
		scan  Scan
		batch []Reported
		want  []want
	}{
		{"a first report creates, approving the verified", first, nil, []want{
			{"b", Approved, true, false}, {"a", Pending, true, false}, {"c", Approved, true, false}}},
		{"the same scan again changes nothing", first, []Reported{rep("a", true), rep("b", true)}, []want{
			{"a", Pending, false, false}, {"b", Approved, false, false}}},
		{"another scan approves, reopens, creates, and counts a repeat once", second,
			[]Reported{rep("d", false), rep("c", false), rep("a", true), rep("d", true), rep("a", false)}, []want{
				{"d", Pending, true, false}, {"c", Approved, false, true}, {"a", Approved, false, false},
				{"d", Pending, false, false}, {"a", Approved, false, false}}},
	}
	for i, tc := range tests {
		got := res
		if i > 0 {
			got, err = s.Report(ctx, tc.scan, tc.batch, true)
			require.NoError(t, err, tc.name)
		}
		require.Len(t, got, len(tc.want), tc.name)
		for j, w := range tc.want {
			r := got[j]
			require.Equal(t, w.fp, r.Fingerprint, "%s: entry %d", tc.name, j)
			require.Equal(t, w.status, r.VerificationStatus, "%s: %s", tc.name, w.fp)
			require.Equal(t, w.created, r.Created, "%s: %s created", tc.name, w.fp)
			require.Equal(t, w.reopened, r.Reopened, "%s: %s reopened", tc.name, w.fp)
			if id, ok := ids[w.fp]; ok {
				require.Equal(t, id, r.FindingID, "%s: %s id", tc.name, w.fp)
			}
			ids[w.fp] = r.FindingID
		}
	}
	var occ int32
	require.NoError(t, pool.QueryRow(ctx, `SELECT occurrence_count FROM findings.findings WHERE id = $1`, ids["a"]).Scan(&occ))
	require.EqualValues(t, 2, occ)
	var state string
	require.NoError(t, pool.QueryRow(ctx, `SELECT state FROM findings.findings WHERE id = $1`, ids["c"]).Scan(&state))
	require.Equal(t, "open", state)
}
