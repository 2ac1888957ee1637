package fold_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/services/findings/internal/fold"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
	"github.com/vulnscan/vulnscan/services/findings/internal/store/storetest"
)

// TestOnce: rounds of Keys counter keys fold every pending delta into one
// settled row per key, say whether more may be pending, and leave every
// total as it was.
func TestOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t, "findings_fold")
	org := uuid.NewString()
	// Three reports into one scan, so every counter key gets several
	// deltas.
	sc := storetest.Scan(t, s, org, "https://git.example.com/acme/app")
	for round := range 3 {
		var fs []store.Reported
		for i := range 4 {
			sev := []string{"high", "low"}[i%2]
			fs = append(fs, store.Reported{Fingerprint: fmt.Sprintf("r%d-%d", round, i), Title: "t", Category: "injection", Severity: sev})
		}
		storetest.Report(t, s, sc, fs...)
	}
	count := func(f store.Filter) int64 {
		f.OrgID = org
		n, err := s.Count(ctx, f)
		require.NoError(t, err)
		return n
	}
	totals := func() []int64 {
		return []int64{count(store.Filter{}), count(store.Filter{Severity: "high"}), count(store.Filter{Severity: "low", State: "open"})}
	}
	before := totals()
	require.Equal(t, []int64{12, 6, 6}, before)
	rows := func(where string) int {
		var n int
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM findings.finding_counts WHERE org_id = $1 AND `+where, org).Scan(&n))
		return n
	}
	var keys int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(DISTINCT (scan_id, severity, state)) FROM findings.finding_counts WHERE org_id = $1`, org).Scan(&keys))
	require.Equal(t, 3*keys, rows("pending"), "three deltas per key before folding")

	w := &fold.Worker{Store: s, Keys: 1}
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
	require.Zero(t, rows("pending"))
	require.Equal(t, keys, rows("true"), "one settled row per key")
	require.Equal(t, before, totals())
}
