package store_test

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
	"github.com/vulnscan/vulnscan/services/scan/internal/store/storetest"
)

// seedScans inserts n started scans of org straight into the table, in
// created_at order with updated_at in another order, a fifth running and
// the rest completed, failed or cancelled in turn; and returns how many
// have each status.
func seedScans(t testing.TB, st *store.Store, org string, n int) map[string]int {
	t.Helper()
	_, err := st.Pool.Exec(t.Context(), `INSERT INTO scan.scans (id, org_id, user_id, task_id, status, start_state, cost_estimation_id, repos, credits, created_at, updated_at)
		SELECT gen_random_uuid(), $1, gen_random_uuid(), 'scan_test',
			CASE WHEN i % 5 = 0 THEN 'running' ELSE (ARRAY['completed', 'failed', 'cancelled'])[1 + i % 3] END,
			'started', gen_random_uuid(), '[]', 1,
			now() - make_interval(secs => i), now() - make_interval(secs => (i * 7919) % $2)
		FROM generate_series(1, $2) i`, org, n)
	require.NoError(t, err)
	rows, err := st.Pool.Query(t.Context(), `SELECT status, count(*)::int FROM scan.scans WHERE org_id = $1 GROUP BY status`, org)
	require.NoError(t, err)
	counts := map[string]int{}
	var status string
	var count int
	_, err = pgx.ForEachRow(rows, []any{&status, &count}, func() error {
		counts[status] = count
		return nil
	})
	require.NoError(t, err)
	return counts
}

// TestListReadsOnlyItsPage: with either plan, a page of an organization's
// scans reads its index entries up to the page's end and the page's rows
// alone, in every sort order, with and without a status, and its total
// reads only the organization's (or the status's) scans, among a
// hundred other organizations holding ten times as many (an organization
// holding half the table is rightly counted by a scan of the table).
// Before migration 0003 a page in update or status order, or of one
// status, read and sorted every scan of the organization. The
// unfinished-scan sweep reads only unfinished scans.
func TestListReadsOnlyItsPage(t *testing.T) {
	ctx, st, org := setup(t)
	const own, limit = 1500, 20
	counts := seedScans(t, st, org, own)
	for range 100 {
		seedScans(t, st, uuid.NewString(), 150)
	}
	_, err := st.Pool.Exec(ctx, `VACUUM ANALYZE scan.scans`)
	require.NoError(t, err)

	for _, sortBy := range []string{"created_at", "updated_at", "status"} {
		for _, status := range []string{"", "running", "completed"} {
			for _, dir := range []string{"DESC", "ASC"} {
				for _, page := range []int32{1, 40} {
					q := store.ListQuery{OrgID: org, Status: status, SortBy: sortBy, SortOrder: dir, Page: page, Limit: limit}
					countSQL, countArgs, pageSQL, pageArgs := store.ListQueries(q, sortBy)
					want := own
					if status != "" {
						want = counts[status]
					}
					for _, mode := range dbtest.PlanModes {
						name := fmt.Sprintf("%s_%s_%s_%d", sortBy, status, dir, page)
						t.Run(name+"_"+mode, func(t *testing.T) {
							p := dbtest.Prepare(t, st.Pool, nil, mode, "page_"+name, "", pageSQL, pageArgs...)
							end := float64((page-1)*limit) + limit
							assert.LessOrEqual(t, dbtest.RowsRead(p.Explain(), "scans", true), end+limit,
								"index entries up to the page's end (%v) and the page's rows", end)
							c := dbtest.Prepare(t, st.Pool, nil, mode, "count_"+name, "", countSQL, countArgs...)
							// Its own scans alone, each read at most twice: an
							// index entry, and its row when the server reads
							// them through a bitmap.
							assert.LessOrEqual(t, dbtest.RowsRead(c.Explain(), "scans", true), float64(2*want), "entries counted")
							var n int
							rows := c.Run()
							require.True(t, rows.Next())
							require.NoError(t, rows.Scan(&n))
							rows.Close()
							assert.Equal(t, want, n)
						})
					}
				}
			}
		}
	}

	// The running scans (a fifth) made idle, among four times as many
	// ended ones.
	_, err = st.Pool.Exec(ctx, `UPDATE scan.scans SET updated_at = now() - interval '1 hour' WHERE status = 'running' AND org_id = $1`, org)
	require.NoError(t, err)
	_, err = st.Pool.Exec(ctx, `VACUUM ANALYZE scan.scans`)
	require.NoError(t, err)
	unfinished := counts["running"] + 100*(150/5)
	for _, mode := range dbtest.PlanModes {
		p := dbtest.Prepare(t, st.Pool, nil, mode, "stranded", "interval", store.StrandedSQL, "5 minutes")
		// Each unfinished scan read at most twice: its index entry and
		// its row.
		assert.LessOrEqual(t, dbtest.RowsRead(p.Explain(), "scans", true), float64(2*unfinished), "%s: scans read by the sweep", mode)
	}
}

// BenchmarkList: a page of an organization's 100,000 scans (beside a
// hundred organizations of 100), in each sort order, of every status and
// of the running ones (a fifth), at page 1 and page 100 of 20, with the
// total.
func BenchmarkList(b *testing.B) {
	st := storetest.New(b, key)
	org := uuid.NewString()
	seedScans(b, st, org, 100_000)
	for range 100 {
		seedScans(b, st, uuid.NewString(), 100)
	}
	_, err := st.Pool.Exec(b.Context(), `VACUUM ANALYZE scan.scans`)
	require.NoError(b, err)
	for _, sortBy := range []string{"created_at", "updated_at", "status"} {
		for _, status := range []string{"", "running"} {
			for _, page := range []int32{1, 100} {
				q := store.ListQuery{OrgID: org, Status: status, SortBy: sortBy, SortOrder: "DESC", Page: page, Limit: 20}
				b.Run(fmt.Sprintf("sort=%s/status=%s/page=%d", sortBy, status, page), func(b *testing.B) {
					for b.Loop() {
						scans, _, err := st.List(b.Context(), q)
						if err != nil || len(scans) != 20 {
							b.Fatal(len(scans), err)
						}
					}
				})
			}
		}
	}
}
