package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestWindowSortedBySeverity: a found_at window sorted by severity, whose
// pages within one severity read that severity's rank index from the hour
// counters' counts (windowBand), gives every page and total exactly as
// sorting the window's findings does: whole hours and partial ones, open
// ends, with and without a state, both directions, pages inside one
// severity and across two, and past the end.
func TestWindowSortedBySeverity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool, sc := reportedScan(t, "wb", 150, func(i int, r *Reported) {
		r.Severity, r.Verified = Severities[(i*3)%len(Severities)], i%13 != 0
	})
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET state = (ARRAY['open','resolved'])[1 + (substr(fingerprint, 3)::int % 2)],
		found_at = timestamptz '2026-02-01' + (substr(fingerprint, 3)::int * 7 % 360) * interval '1 minute' WHERE org_id = $1`, sc.OrgID); err != nil {
		t.Fatal(err)
	}
	at := func(h, m int) time.Time { return time.Date(2026, 2, 1, h, m, 0, 0, time.UTC) }
	windows := []struct {
		name         string
		since, until time.Time
	}{
		{"whole hours", at(1, 0), at(4, 0)},
		{"partial hours", at(0, 40), at(5, 20)},
		{"since", at(2, 30), time.Time{}},
		{"until", time.Time{}, at(3, 10)},
	}
	banded := 0
	for _, w := range windows {
		for _, state := range []string{"", "open"} {
			for _, desc := range []bool{true, false} {
				f := Filter{OrgID: sc.OrgID, State: state, SortBy: "severity", Desc: desc, Limit: 7, FoundSince: w.since, FoundUntil: w.until}
				var want []string
				if err := pool.QueryRow(ctx, `SELECT coalesce(array_agg(id::text ORDER BY `+f.orderBy("f")+`), '{}') FROM findings.findings f
					WHERE org_id = $1 AND verification_status = 'approved' AND ($2 = '' OR state = $2)
						AND ($3::timestamptz IS NULL OR found_at >= $3) AND ($4::timestamptz IS NULL OR found_at < $4)`,
					sc.OrgID, state, nullTime(w.since), nullTime(w.until)).Scan(&want); err != nil {
					t.Fatal(err)
				}
				if len(want) < 20 {
					t.Fatalf("%s: the fixture has %d findings in the window", w.name, len(want))
				}
				for off := 0; off <= len(want)+f.Limit; off += f.Limit {
					f.Offset = off
					name := fmt.Sprintf("%s state=%q desc=%t offset=%d", w.name, state, desc, off)
					b, n, counted, err := f.windowBand(ctx, pool)
					if err != nil || !counted || n != int64(len(want)) {
						t.Fatalf("%s: window total %d counted %t (%v), want %d", name, n, counted, err, len(want))
					}
					if b.rankHi != 0 {
						banded++
						if b.rankLo != b.rankHi || b.Offset > off {
							t.Errorf("%s: band %d..%d offset %d", name, b.rankLo, b.rankHi, b.Offset)
						}
					}
					ids, total := listIDs(t, s, f)
					page := want[min(off, len(want)):min(off+f.Limit, len(want))]
					if !slices.Equal(ids, page) || total != int64(len(want)) {
						t.Errorf("%s: page %v total %d, want %v total %d", name, ids, total, page, len(want))
					}
				}
			}
		}
	}
	t.Logf("%d pages found within one severity", banded)
	if banded == 0 {
		t.Error("no page was found within one severity")
	}
	// Other filters than the state are not counted per hour: no band.
	f := Filter{OrgID: sc.OrgID, Category: "xss", SortBy: "severity", Desc: true, Limit: 7, FoundSince: at(1, 0), FoundUntil: at(4, 0)}
	if b, _, counted, err := f.windowBand(ctx, pool); err != nil || counted || b.rankHi != 0 {
		t.Errorf("a window with a category got the band %d..%d, counted %t (%v)", b.rankLo, b.rankHi, counted, err)
	}
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
