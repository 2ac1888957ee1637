package store

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestCompleteScan: completing a PR scan queues one review comment per
// approved finding and one summary per git hosting integration, once; a
// later scan of the same pull request comments only on findings not
// commented before; full scans and other integration kinds get nothing.
func TestCompleteScan(t *testing.T) {
	u := newUnit(t)
	ctx, s, org, pool := u.ctx, u.s, u.org, u.s.Pool
	gitHost, err := s.AddIntegration(ctx, Integration{OrgID: org, Kind: GitHostingKind, Name: "git", URL: "https://git.example.com/api"})
	require.NoError(t, err)
	_, err = s.AddIntegration(ctx, Integration{OrgID: org, Kind: "slack", Name: "chat", URL: "https://chat.example.com/REDACTED"})
	require.NoError(t, err)

	repo := "https://git.example.com/acme/app"
	rep := func(fp string, verified bool) Reported {
		return Reported{Fingerprint: fp, Title: "t " + fp, Category: "injection", Severity: "high", AffectedFile: "app.py", StartLine: 3, Verified: verified}
	}
	scan := func(typ string, pr int32, fs ...Reported) Scan {
		sc := Scan{ID: uuid.NewString(), OrgID: org, RepoURL: repo, ScanType: typ, CommitSHA: "abc", PullRequest: pr}
		_, err := s.RegisterScan(ctx, sc)
		require.NoError(t, err)
		_, err = s.Report(ctx, sc, fs, true)
		require.NoError(t, err)
		return sc
	}
	events := func(scanID string) map[string]int {
		rows, err := pool.Query(ctx, `SELECT event, integration_id::text FROM findings.outbox WHERE scan_id = $1`, scanID)
		require.NoError(t, err)
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var ev, integ string
			require.NoError(t, rows.Scan(&ev, &integ))
			require.Equal(t, gitHost.ID, integ, "only the git hosting integration gets review events")
			out[ev]++
		}
		return out
	}

	first := scan("pr", 7, rep("a", true), rep("b", true), rep("held", false))
	n, err := s.CompleteScan(ctx, org, first.ID)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Equal(t, map[string]int{EventReviewComment: 2, EventReviewSummary: 1}, events(first.ID))

	n, err = s.CompleteScan(ctx, org, first.ID)
	require.NoError(t, err)
	require.Zero(t, n, "a retried completion queues nothing")
	require.Equal(t, map[string]int{EventReviewComment: 2, EventReviewSummary: 1}, events(first.ID))

	again := scan("pr", 7, rep("a", true), rep("c", true))
	n, err = s.CompleteScan(ctx, org, again.ID)
	require.NoError(t, err)
	require.Equal(t, map[string]int{EventReviewComment: 1, EventReviewSummary: 1}, events(again.ID), "a is commented on pull request 7 already")
	require.Equal(t, 2, n)

	full := scan("full", 0, rep("d", true))
	n, err = s.CompleteScan(ctx, org, full.ID)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Empty(t, events(full.ID))

	_, err = s.CompleteScan(ctx, uuid.NewString(), first.ID)
	require.ErrorIs(t, err, ErrScanNotFound, "another organization's scan")
}
