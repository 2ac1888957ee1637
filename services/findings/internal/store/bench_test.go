package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// BenchmarkList1M seeds 1,000,000 approved findings in one organization
// (10 repositories, 100 scans of 10,000 first-found findings each, every
// severity and state) and measures a first page and page 1,000 for every
// filter and sort combination, exact total included.
func BenchmarkList1M(b *testing.B) {
	ctx := context.Background()
	pool := dbtest.New(b)
	if err := Migrate(ctx, pool); err != nil {
		b.Fatal(err)
	}
	s := &Store{Pool: pool}
	org := uuid.NewString()
	start := time.Now()
	// Seeding bypasses the counting triggers and builds the counters once.
	_, err := pool.Exec(ctx, `
		SET session_replication_role = replica;
		INSERT INTO findings.scans (id, org_id, repo_url, repo_key, scan_type)
			SELECT md5('scan' || g)::uuid, '`+org+`', 'https://git.example.com/acme/repo' || (g % 10), 'https://git.example.com/acme/repo' || (g % 10), 'full'
			FROM generate_series(0, 99) g;
		INSERT INTO findings.findings (id, org_id, repo_key, fingerprint, scan_id, title, category, severity, severity_rank, state,
			verification_status, found_at, updated_at)
			SELECT md5('f' || g)::uuid, '`+org+`', 'https://git.example.com/acme/repo' || ((g / 10000) % 10), 'fp' || g,
				md5('scan' || (g / 10000))::uuid, 'Finding ' || g, 'injection',
				(ARRAY['critical','high','medium','low','info'])[1 + g % 5], 5 - g % 5,
				(ARRAY['open','true_positive','false_positive','accepted_risk','resolved'])[1 + (g / 5) % 5],
				'approved', timestamptz '2026-01-01' + (g / 3) * interval '1 second', timestamptz '2026-06-01' - (g % 9973) * interval '1 minute'
			FROM generate_series(0, 999999) g;
		INSERT INTO findings.occurrences (scan_id, finding_id) SELECT scan_id, id FROM findings.findings;
		INSERT INTO findings.finding_counts (org_id, scan_id, severity, state, n)
			SELECT org_id, '00000000-0000-0000-0000-000000000000'::uuid, severity, state, count(*) FROM findings.findings GROUP BY 1, 2, 3, 4
			UNION ALL
			SELECT f.org_id, o.scan_id, f.severity, f.state, count(*) FROM findings.findings f JOIN findings.occurrences o ON o.finding_id = f.id GROUP BY 1, 2, 3, 4;
		SET session_replication_role = DEFAULT;`)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range []string{"findings.findings", "findings.occurrences", "findings.finding_counts"} {
		if _, err := pool.Exec(ctx, "VACUUM ANALYZE "+t); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("seeded 1,000,000 findings in %s", time.Since(start).Round(time.Millisecond))
	var scan string
	if err := pool.QueryRow(ctx, `SELECT md5('scan' || 42)::uuid::text`).Scan(&scan); err != nil {
		b.Fatal(err)
	}

	type combo struct{ sev, state, scan string }
	combos := []combo{{}, {sev: "high"}, {state: "resolved"}, {sev: "low", state: "open"}, {scan: scan}, {scan: scan, sev: "critical", state: "accepted_risk"}}
	for _, c := range combos {
		for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
			for _, desc := range []bool{true, false} {
				for _, page := range []int{1, 1000} {
					f := Filter{OrgID: org, Severity: c.sev, State: c.state, ScanID: c.scan, SortBy: sortBy, Desc: desc, Limit: 15, Offset: (page - 1) * 15}
					name := fmt.Sprintf("sev=%s/state=%s/scan=%t/sort=%s/desc=%t/page=%d", c.sev, c.state, c.scan != "", sortBy, desc, page)
					b.Run(name, func(b *testing.B) {
						var total int64
						for i := 0; i < b.N; i++ {
							var err error
							if _, total, err = s.List(ctx, f); err != nil {
								b.Fatal(err)
							}
						}
						b.ReportMetric(float64(total), "total")
					})
				}
			}
		}
	}
}
