package store

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// TestSpecListsPlannedOnce: the spec's lists (a severity, a state, a scan
// and a sort) run their pages on generic plans (see plannedOnce), and for
// every filter, sort and page, before and after the tables are analyzed,
// the generic plan of the page reads no more rows than the plan made for
// its values, and the generic plan of the total reads no finding. The
// store then runs a page on a generic plan from its first run: with the
// server choosing (its default), every run made a plan of its own.
func TestSpecListsPlannedOnce(t *testing.T) {
	u := newUnit(t)
	large := u.largeScan(1200, "xss")
	other := u.scan("https://git.example.com/acme/other")
	u.reportMany(other, 600, func(i int) Reported {
		return Reported{Fingerprint: fmt.Sprintf("other-%05d", i), Title: "t", Category: "injection",
			Severity: Severities[i%len(Severities)], Verified: true}
	})
	_, err := u.s.Pool.Exec(u.ctx, `UPDATE findings.findings SET state = 'resolved'
		WHERE org_id = $1 AND (fingerprint LIKE '%3' OR fingerprint LIKE '%7')`, u.org)
	require.NoError(t, err)

	n := 0
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			_, err := u.s.Pool.Exec(u.ctx, `ANALYZE findings.findings, findings.occurrences, findings.finding_counts`)
			require.NoError(t, err)
		}
		for _, scan := range []string{"", large.ID, other.ID} {
			// The list's own table: the scan's occurrences, else the findings.
			table := "findings"
			if scan != "" {
				table = "occurrences"
			}
			for _, sev := range []string{"", "high", "low"} {
				for _, state := range []string{"", "open", "resolved"} {
					for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
						for _, desc := range []bool{true, false} {
							for _, offset := range []int{0, 450} {
								f := Filter{OrgID: u.org, ScanID: scan, Severity: sev, State: state, SortBy: sortBy, Desc: desc, Limit: 15, Offset: offset}
								require.True(t, f.plannedOnce())
								name := fmt.Sprintf("analyzed=%t/scan=%t/sev=%s/state=%s/%s/desc=%t/offset=%d", analyzed, scan != "", sev, state, sortBy, desc, offset)
								page, pageArgs, total, totalArgs := f.Queries()
								n++ // prepared statements outlive their transactions
								// A subtest each: a prepared statement's transaction
								// lasts until its test ends.
								t.Run(name, func(t *testing.T) {
									read := map[string]float64{}
									for _, mode := range planModes {
										p := u.prepare(t, mode, fmt.Sprintf("spec_page_%d", n), "", page, pageArgs...)
										read[mode] = dbtest.RowsRead(p.Explain(), table, false)
										c := u.prepare(t, mode, fmt.Sprintf("spec_total_%d", n), "", total, totalArgs...)
										assert.Zero(t, findingsRead(c), "%s: findings read for the total", mode)
									}
									generic, custom := read["force_generic_plan"], read["force_custom_plan"]
									assert.LessOrEqual(t, generic, max(custom, float64(offset+f.Limit+1)),
										"%s rows read by the generic plan, against %v by the custom one", table, custom)
								})
							}
						}
					}
				}
			}
		}
	}

	// The store's own runs, on one connection whose prepared statements
	// say which plans ran.
	cfg := u.s.Pool.Config().Copy()
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(u.ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s := &Store{Pool: pool}
	for _, scan := range []string{"", large.ID} {
		f := Filter{OrgID: u.org, ScanID: scan, State: "open", SortBy: "found_at", Desc: true, Limit: 15}
		want := eachID(t, s, f)
		for page := range 8 {
			f.Offset = page * f.Limit
			got, total := listIDs(t, s, f)
			require.EqualValues(t, len(want), total)
			require.Equal(t, want[f.Offset:min(f.Offset+f.Limit, len(want))], got, "scan %q page %d", scan, page+1)
		}
	}
	rows, err := pool.Query(u.ctx, `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements
		WHERE statement LIKE '%LIMIT 15 OFFSET%' AND statement NOT LIKE '%pg_prepared_statements%'`)
	require.NoError(t, err)
	pages := 0
	for rows.Next() {
		var statement string
		var generic, custom int64
		require.NoError(t, rows.Scan(&statement, &generic, &custom))
		pages++
		assert.EqualValues(t, 8, generic, "generic plans of %s", statement)
		assert.Zero(t, custom, "custom plans of %s", statement)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 2, pages, "the organization's page and the scan's")
}
