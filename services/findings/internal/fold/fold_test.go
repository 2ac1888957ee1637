package fold_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/services/findings/internal/fold"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// TestOnce: rounds of Keys counter keys fold every pending delta into one
// settled row per key, say whether more may be pending, and leave every
// total as it was.
func TestOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.Migrated(t, "findings_fold", store.Migrate)
	s := &store.Store{Pool: pool}
	org := uuid.NewString()
	sc := store.Scan{ID: uuid.NewString(), OrgID: org, RepoURL: "https://git.example.com/acme/app", ScanType: "full"}
	_, err := s.RegisterScan(ctx, sc)
	require.NoError(t, err)
	// Three reports, so each (severity, state) key gets several deltas.
	for round := range 3 {
		var batch []store.Reported
		for i := range 4 {
			sev := []string{"high", "low"}[i%2]
			batch = append(batch, store.Reported{Fingerprint: fmt.Sprintf("r%d-%d", round, i), Title: "t", Category: "injection", Severity: sev, Verified: true})
		}
		_, err := s.Report(ctx, sc, batch, true)
		require.NoError(t, err)
	}
	count := func(f store.Filter) int64 {
		f.OrgID = org
		n, err := s.Count(ctx, f)
		require.NoError(t, err)
		return n
	}
	totals := []int64{count(store.Filter{}), count(store.Filter{Severity: "high"}), count(store.Filter{Severity: "low", State: "open"})}
	require.Equal(t, []int64{12, 6, 6}, totals)
	pending := func() int {
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM findings.finding_counts WHERE org_id = $1 AND pending`, org).Scan(&n))
		return n
	}
	require.Greater(t, pending(), 2, "several deltas per key before folding")

	w := &fold.Worker{Store: s, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Every: time.Hour, Keys: 1}
	rounds := 0
	for {
		more, err := w.Once(ctx)
		require.NoError(t, err)
		rounds++
		if !more {
			break
		}
		require.Less(t, rounds, 100, "folding ends")
	}
	require.Greater(t, rounds, 1, "one key per round: several rounds")
	require.Zero(t, pending())
	var rows int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM findings.finding_counts WHERE org_id = $1`, org).Scan(&rows))
	require.Equal(t, 4, rows, "one settled row per key: (high, open) and (low, open), for the scan and for all scans")
	require.Equal(t, totals, []int64{count(store.Filter{}), count(store.Filter{Severity: "high"}), count(store.Filter{Severity: "low", State: "open"})})
}
