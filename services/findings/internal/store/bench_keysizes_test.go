package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// BenchmarkSearchKeySizes measures a search whose keys differ in size, as
// a codebase's rules do, where BenchmarkList1M's keys are all of one size:
// 120,000 approved findings in one organization, of which q matches
// 60,000 through one description of 30,000 findings and 300 descriptions
// of 100 each, every key's findings spread over the same days (found_at),
// the others matching nothing; every severity and state. Each order's page
// 1, 100 and 1,000, exact totals, a row each, as ms per List. It seeds a
// fresh database (about a minute) and drops it.
func BenchmarkSearchKeySizes(b *testing.B) {
	s, org := seedSearchBench(b, searchSeed{name: "sizes", findings: 120000,
		foundAt: `CASE WHEN g < 30000 THEN g * 10 WHEN g < 60000 THEN (g - 30000) / 300 * 3000 + (g - 30000) % 300 * 10
			ELSE (g - 60000) * 5 END * interval '1 second'`,
		description: `CASE WHEN g < 30000 THEN 'Sink in handler 0' WHEN g < 60000 THEN 'Sink in handler ' || (1 + (g - 30000) % 300)
			ELSE 'Other ' || (g % 100) END`})
	var pages []benchPage
	for _, sortBy := range []string{"found_at", "severity", "updated_at"} {
		for _, page := range []int{1, 100, 1000} {
			pages = append(pages, benchPage{name: fmt.Sprintf("sort=%s/page=%d", sortBy, page),
				f: Filter{OrgID: org, Text: "sink in handler", SortBy: sortBy, Desc: true, Limit: 15, Offset: (page - 1) * 15}})
		}
	}
	benchPages(b, s, "search of keys of two sizes", pages)
}

// searchSeed describes the findings seedSearchBench writes: finding g, from
// 0, of findings, is found at found_at's start plus foundAt and has
// description (SQL expressions of g); its title is one of seven rules',
// and its severity, state, update time and file cycle through their
// values. Each finding is found by one scan: scanOf's (an SQL expression
// of g, from 0, below scans), or the organization's one scan when scans is
// 0.
type searchSeed struct {
	name                 string
	findings             int
	foundAt, description string
	scans                int
	scanOf               string
}

// scanID is the id of scan i of seed (see searchSeed.scans).
func (seed searchSeed) scanID(i int) string {
	if seed.scans == 0 {
		return uuid.NewMD5(uuid.Nil, []byte(seed.name)).String()
	}
	return uuid.NewMD5(uuid.Nil, []byte(fmt.Sprint(seed.name, "/", i))).String()
}

// seedSearchBench seeds, in a fresh database that is dropped when b ends,
// one organization with its scans and the approved findings of seed, as
// seedList1M does: the triggers bypassed, the search keys and counters
// built by the later migrations from the rows. It returns the store and
// the organization.
func seedSearchBench(b *testing.B, seed searchSeed) (*Store, string) {
	ctx := context.Background()
	pool := dbtest.New(b)
	org := uuid.NewString()
	ids, scanOf := []string{seed.scanID(0)}, "0"
	for i := 1; i < seed.scans; i++ {
		ids, scanOf = append(ids, seed.scanID(i)), "("+seed.scanOf+")"
	}
	if err := db.Migrate(ctx, pool, Schema, migrationsBefore(b, "0007")); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		SET session_replication_role = replica;
		INSERT INTO findings.scans (id, org_id, repo_url, repo_key, scan_type)
			SELECT (ARRAY['`+strings.Join(ids, "','")+`'])[1 + i]::uuid, '`+org+`', 'https://git.example.com/acme/app',
				'https://git.example.com/acme/app', 'full' FROM generate_series(0, `+fmt.Sprint(len(ids)-1)+`) i;
		INSERT INTO findings.findings (id, org_id, repo_key, fingerprint, scan_id, title, category, severity, severity_rank, state,
			verification_status, found_at, updated_at, description, affected_file, tags)
			SELECT md5('`+seed.name+`' || g)::uuid, '`+org+`', 'https://git.example.com/acme/app', 'fp' || g,
				(ARRAY['`+strings.Join(ids, "','")+`'])[1 + `+scanOf+`]::uuid, 'Rule ' || (g % 7),
				'injection', (ARRAY['critical','high','medium','low','info'])[1 + g % 5], 5 - g % 5,
				(ARRAY['open','true_positive','false_positive','accepted_risk','resolved'])[1 + (g / 5) % 5], 'approved',
				timestamptz '2026-01-01' + `+seed.foundAt+`,
				timestamptz '2026-06-01' - (g % 9973) * interval '1 minute',
				`+seed.description+`,
				'src/f' || (g % 1000) || '.go', '{}'
			FROM generate_series(0, `+fmt.Sprint(seed.findings-1)+`) g;
		INSERT INTO findings.occurrences (scan_id, finding_id, approved, severity_rank, state, found_at, updated_at)
			SELECT scan_id, id, true, severity_rank, state, found_at, updated_at FROM findings.findings;`+seedFindingCounts+`
		SET session_replication_role = DEFAULT;`); err != nil {
		b.Fatal(err)
	}
	if err := Migrate(ctx, pool); err != nil {
		b.Fatal(err)
	}
	vacuumSeeded(ctx, b, pool)
	return &Store{Pool: pool}, org
}

// benchPage is a page benchPages measures.
type benchPage struct {
	name string
	f    Filter
}

// benchPages measures List for each page, a sub-benchmark each, then
// prints a table of ms per List and totals under title.
func benchPages(b *testing.B, s *Store, title string, pages []benchPage) {
	ctx := context.Background()
	type row struct {
		name  string
		perOp time.Duration
		total int64
	}
	var rows []*row
	for _, p := range pages {
		r := &row{name: p.name}
		rows = append(rows, r)
		b.Run(r.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var err error
				if _, r.total, err = s.List(ctx, p.f); err != nil {
					b.Fatal(err)
				}
			}
			r.perOp = b.Elapsed() / time.Duration(b.N)
		})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	fmt.Printf("\n%-38s %8s %8s\n", title, "ms/op", "total")
	for _, r := range rows {
		fmt.Printf("%-38s %8.2f %8d\n", r.name, float64(r.perOp.Microseconds())/1000, r.total)
	}
}
