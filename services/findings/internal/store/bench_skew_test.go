package store

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// BenchmarkSearchSkewed measures a search whose matches all lie at one end
// of the list, as a rule's findings do once its wording changed: 300,000
// approved findings in one organization, of which q matches the 60,000
// oldest, through 1,500 descriptions of 40 findings each; the 240,000
// newer ones have 500 other descriptions. Page 1, 100 and 1,000 newest
// first (the matches after every other finding), oldest first (the
// matches first) and in update order (spread over the list), exact totals,
// a row each, as ms per List. It seeds a fresh database (about a minute)
// and drops it.
func BenchmarkSearchSkewed(b *testing.B) {
	ctx := context.Background()
	pool := dbtest.New(b)
	org := uuid.NewString()
	if err := db.Migrate(ctx, pool, Schema, migrationsBefore(b, "0007")); err != nil {
		b.Fatal(err)
	}
	// As seedList1M: the triggers bypassed, the search keys and counters
	// built by the later migrations from the rows.
	if _, err := pool.Exec(ctx, `
		SET session_replication_role = replica;
		INSERT INTO findings.scans (id, org_id, repo_url, repo_key, scan_type)
			VALUES (md5('skew')::uuid, '`+org+`', 'https://git.example.com/acme/app', 'https://git.example.com/acme/app', 'full');
		INSERT INTO findings.findings (id, org_id, repo_key, fingerprint, scan_id, title, category, severity, severity_rank, state,
			verification_status, found_at, updated_at, description, affected_file, tags)
			SELECT md5('skew' || g)::uuid, '`+org+`', 'https://git.example.com/acme/app', 'fp' || g, md5('skew')::uuid, 'Rule ' || (g % 7),
				'injection', (ARRAY['critical','high','medium','low','info'])[1 + g % 5], 5 - g % 5,
				(ARRAY['open','true_positive','false_positive','accepted_risk','resolved'])[1 + (g / 5) % 5], 'approved',
				timestamptz '2026-01-01' + g * interval '10 seconds',
				timestamptz '2026-06-01' - (g % 9973) * interval '1 minute',
				CASE WHEN g < 60000 THEN 'Legacy sink in handler ' || (g % 1500) ELSE 'Tainted data reaches handler ' || (g % 500) END,
				'src/f' || (g % 1000) || '.go', '{}'
			FROM generate_series(0, 299999) g;
		INSERT INTO findings.occurrences (scan_id, finding_id, approved, severity_rank, state, found_at, updated_at)
			SELECT scan_id, id, true, severity_rank, state, found_at, updated_at FROM findings.findings;`+seedFindingCounts+`
		SET session_replication_role = DEFAULT;`); err != nil {
		b.Fatal(err)
	}
	if err := Migrate(ctx, pool); err != nil {
		b.Fatal(err)
	}
	vacuumSeeded(ctx, b, pool)
	s := &Store{Pool: pool}
	type row struct {
		name  string
		perOp time.Duration
		total int64
	}
	var rows []*row
	for _, order := range []struct {
		sortBy string
		desc   bool
	}{{"found_at", true}, {"found_at", false}, {"updated_at", true}} {
		for _, page := range []int{1, 100, 1000} {
			f := Filter{OrgID: org, Text: "legacy sink", SortBy: order.sortBy, Desc: order.desc, Limit: 15, Offset: (page - 1) * 15}
			r := &row{name: fmt.Sprintf("sort=%s/desc=%t/page=%d", order.sortBy, order.desc, page)}
			rows = append(rows, r)
			b.Run(r.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					var err error
					if _, r.total, err = s.List(ctx, f); err != nil {
						b.Fatal(err)
					}
				}
				r.perOp = b.Elapsed() / time.Duration(b.N)
			})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	fmt.Printf("\n%-38s %8s %8s\n", "search matching the oldest findings", "ms/op", "total")
	for _, r := range rows {
		fmt.Printf("%-38s %8.2f %8d\n", r.name, float64(r.perOp.Microseconds())/1000, r.total)
	}
}
