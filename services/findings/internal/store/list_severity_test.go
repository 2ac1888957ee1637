package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestSeverityFilterByRank: a severity filter, which the list reads through
// the rank indexes in found_at and severity order and through the severity
// name in update order, selects exactly the findings of that severity, with
// or without a state, a found_at window and a repository, in every order;
// an unknown severity selects none. The indexes on the severity name in
// found_at order are gone.
func TestSeverityFilterByRank(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool, sc := reportedScan(t, "sv", 60, func(i int, r *Reported) {
		r.Severity, r.Verified = Severities[(i*7)%len(Severities)], i%11 != 0
	})
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET state = (ARRAY['open','resolved','false_positive'])[1 + (substr(fingerprint, 3)::int % 3)],
		found_at = timestamptz '2026-02-01' + (substr(fingerprint, 3)::int % 17) * interval '1 hour',
		updated_at = timestamptz '2026-03-01' + (substr(fingerprint, 3)::int % 13) * interval '1 minute' WHERE org_id = $1`, sc.OrgID); err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 2, 1, 3, 30, 0, 0, time.UTC)
	for _, sev := range append(slices.Clone(Severities), "bogus") {
		for _, state := range []string{"", "resolved"} {
			for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
				for _, window := range []bool{false, true} {
					f := Filter{OrgID: sc.OrgID, Severity: sev, State: state, SortBy: sortBy, Desc: true, Limit: 100}
					if window {
						f.FoundSince, f.FoundUntil = since, since.Add(10*time.Hour)
					}
					var want []string
					if err := pool.QueryRow(ctx, `SELECT coalesce(array_agg(id::text ORDER BY `+f.orderBy("f")+`), '{}') FROM findings.findings f
						WHERE org_id = $1 AND verification_status = 'approved' AND severity = $2 AND ($3 = '' OR state = $3)
							AND ($4 = false OR (found_at >= $5 AND found_at < $6))`,
						sc.OrgID, sev, state, window, f.FoundSince, f.FoundUntil).Scan(&want); err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("severity=%s state=%q sort=%s window=%t", sev, state, sortBy, window)
					ids, total := listIDs(t, s, f)
					if !slices.Equal(ids, want) || total != int64(len(want)) {
						t.Errorf("%s: %d rows total %d, want %d", name, len(ids), total, len(want))
					}
					if sev != "bogus" && state == "" && !window && len(want) == 0 {
						t.Errorf("%s: the fixture has none", name)
					}
				}
			}
		}
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = 'findings'
		AND indexname IN ('findings_list_sev_found', 'findings_list_sev_state_found')`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d indexes on the severity name in found_at order remain", left)
	}
}
