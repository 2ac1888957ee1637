package store

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// seedOccurrences inserts the seeded occurrences, with the list keys the
// triggers would copy from their findings: every finding in the scan that
// first found it, and a full rescan of repository 2 (scan 100) that sees
// again all of its 100,000 findings.
const seedOccurrences = `
		INSERT INTO findings.occurrences (scan_id, finding_id, approved, severity_rank, state, found_at, updated_at)
			SELECT scan_id, id, verification_status = 'approved', severity_rank, state, found_at, updated_at FROM findings.findings;
		INSERT INTO findings.occurrences (scan_id, finding_id, approved, severity_rank, state, found_at, updated_at)
			SELECT md5('scan' || 100)::uuid, id, verification_status = 'approved', severity_rank, state, found_at, updated_at
			FROM findings.findings WHERE repo_key = 'https://git.example.com/acme/repo2';`

// seedFindingCounts builds the spec's counters of seeded findings and
// occurrences (the triggers that keep them are bypassed while seeding):
// the organization's per severity and state, and each scan's.
const seedFindingCounts = `
		INSERT INTO findings.finding_counts (org_id, scan_id, severity, state, n)
			SELECT org_id, '00000000-0000-0000-0000-000000000000'::uuid, severity, state, count(*) FROM findings.findings GROUP BY 1, 2, 3, 4
			UNION ALL
			SELECT f.org_id, o.scan_id, f.severity, f.state, count(*) FROM findings.findings f JOIN findings.occurrences o ON o.finding_id = f.id GROUP BY 1, 2, 3, 4;`

// BenchmarkList1M seeds 1,000,000 approved findings in one organization
// (10 repositories, 100 scans of 10,000 first-found findings each, every
// severity and state, plus one rescan of a repository that sees 100,000 of
// them again; titles from five rules, 5,000 distinct descriptions and
// 7,000 distinct files, as findings share the texts of the rules that
// raise them) and measures a first page and page 1,000 (or the last page
// when there are fewer) for every filter and sort combination, exact total
// included, then prints a table of the figures.
//
// Seeding takes minutes. With VULNSCAN_BENCH_DB naming a database on the
// test server, the benchmark keeps its data there: it creates and seeds the
// database when it does not exist, and reuses it (applying any newer
// migrations) when it does, so that indexes can be compared without seeding
// again. Without it, the benchmark seeds a fresh database and drops it.
func BenchmarkList1M(b *testing.B) {
	ctx := context.Background()
	pool, org, seeded := benchDatabase(b)
	if !seeded {
		seedList1M(ctx, b, pool, org)
	}
	s := &Store{Pool: pool, TextCopies: true} // as the service runs it
	start := time.Now()
	if err := Migrate(ctx, pool); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("migrations after seeding (search indexes and counters) applied in %s\n", time.Since(start).Round(time.Millisecond))
	// A running service holds the copy of the organization's texts once
	// any q has been searched (see textCache).
	if err := s.textCache().refresh(ctx, org); err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	vacuumSeeded(ctx, b, pool)
	fmt.Printf("vacuumed and analyzed in %s\n", time.Since(start).Round(time.Millisecond))
	benchList1M(ctx, b, s, org)
}

// vacuumSeeded vacuums and analyzes the tables a seeded benchmark
// database reads: the findings, their occurrences, tag rows, distinct
// texts and paths, and every counter table.
func vacuumSeeded(ctx context.Context, b *testing.B, pool *pgxpool.Pool) {
	tables := []string{"findings", "occurrences", "finding_tags", "search_texts", "search_files"}
	for _, c := range counterTables {
		tables = append(tables, c.table)
	}
	for _, t := range tables {
		if _, err := pool.Exec(ctx, "VACUUM ANALYZE findings."+t); err != nil {
			b.Fatal(err)
		}
	}
}

// benchDatabase returns the benchmark's database, its organization and
// whether it is already seeded (see BenchmarkList1M).
func benchDatabase(b *testing.B) (*pgxpool.Pool, string, bool) {
	ctx := context.Background()
	name := os.Getenv("VULNSCAN_BENCH_DB")
	if name == "" {
		return dbtest.New(b), uuid.NewString(), false
	}
	cfg, err := pgx.ParseConfig(dbtest.ServerURL())
	if err != nil {
		b.Fatal(err)
	}
	cfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	var exists bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		b.Fatal(err)
	}
	if !exists {
		if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			b.Fatal(err)
		}
	}
	_ = admin.Close(ctx)
	pcfg, err := pgxpool.ParseConfig(dbtest.ServerURL())
	if err != nil {
		b.Fatal(err)
	}
	pcfg.ConnConfig.Database = name
	db.Configure(pcfg.ConnConfig)
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	var org string
	err = pool.QueryRow(ctx, `SELECT org_id::text FROM findings.scans LIMIT 1`).Scan(&org)
	if err == nil {
		return pool, org, true
	}
	return pool, uuid.NewString(), false
}

// seedList1M applies the migrations before the search filters' and seeds
// the findings.
func seedList1M(ctx context.Context, b *testing.B, pool *pgxpool.Pool, org string) {
	// The schema before the search indexes: they are built by their
	// migration after seeding, as on a database that already holds the
	// findings (and building them at once is faster than row by row).
	if err := db.Migrate(ctx, pool, Schema, migrationsBefore(b, "0007")); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	// Seeding bypasses the triggers and builds the counters once.
	_, err := pool.Exec(ctx, `
		SET session_replication_role = replica;
		INSERT INTO findings.scans (id, org_id, repo_url, repo_key, scan_type)
			SELECT md5('scan' || g)::uuid, '`+org+`', 'https://git.example.com/acme/repo' || r, 'https://git.example.com/acme/repo' || r, 'full'
			FROM generate_series(0, 100) g, LATERAL (SELECT CASE WHEN g = 100 THEN 2 ELSE g % 10 END AS r) r; -- scan 100 rescans repository 2
		INSERT INTO findings.findings (id, org_id, repo_key, fingerprint, scan_id, title, category, severity, severity_rank, state,
			verification_status, found_at, updated_at, description, affected_file, tags)
			SELECT md5('f' || g)::uuid, '`+org+`', 'https://git.example.com/acme/repo' || ((g / 10000) % 10), 'fp' || g,
				md5('scan' || (g / 10000))::uuid,
				(ARRAY['SQL injection in query builder','Reflected XSS in template','Hard-coded credential','Path traversal in upload','Weak hash'])[1 + g % 5],
				(ARRAY['injection','xss','auth','access_control','secrets','ssrf','path_traversal','deserialization','crypto','misconfiguration','dependency','other'])[1 + g % 12],
				(ARRAY['critical','high','medium','low','info'])[1 + g % 5], 5 - g % 5,
				(ARRAY['open','true_positive','false_positive','accepted_risk','resolved'])[1 + (g / 5) % 5],
				'approved', timestamptz '2026-01-01' + (g / 3) * interval '1 second', timestamptz '2026-06-01' - (g % 9973) * interval '1 minute',
				'User input reaches a sink in function handler' || (g % 5000) || ' without validation.',
				'src/svc' || (g % 50) || '/pkg' || (g % 7) || '/file' || (g % 1000) || '.go',
				ARRAY['cwe-' || (g % 40)] || CASE WHEN g % 100 = 0 THEN ARRAY['pci'] ELSE '{}'::text[] END
			FROM generate_series(0, 999999) g;`+seedOccurrences+seedFindingCounts+`
		SET session_replication_role = DEFAULT;`)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("seeded 1,000,000 findings in %s\n", time.Since(start).Round(time.Millisecond))
}

// benchList1M measures the lists over the seeded findings.
func benchList1M(ctx context.Context, b *testing.B, s *Store, org string) {
	pool := s.Pool
	var scan, rescan string
	if err := pool.QueryRow(ctx, `SELECT md5('scan' || 42)::uuid::text, md5('scan' || 100)::uuid::text`).Scan(&scan, &rescan); err != nil {
		b.Fatal(err)
	}

	type combo struct{ sev, state, scan string }
	combos := []combo{{}, {sev: "high"}, {state: "resolved"}, {sev: "low", state: "open"}}
	for _, sc := range []string{scan, rescan} {
		combos = append(combos, combo{scan: sc}, combo{scan: sc, sev: "high"}, combo{scan: sc, state: "resolved"},
			combo{scan: sc, sev: "critical", state: "accepted_risk"})
	}
	scanName := map[string]string{"": "-", scan: "scan42(10k)", rescan: "rescan(100k)"}
	type result struct {
		benchRow
		name  string
		total int64
	}
	var results []*result
	// measure runs f's first page and page 1,000 (or its last page).
	measure := func(filter string, f Filter) {
		n, err := s.Count(ctx, f)
		if err != nil {
			b.Fatal(err)
		}
		last := max(1, int((n+14)/15))
		for _, page := range []int{1, min(1000, last)} {
			f.Offset = (page - 1) * 15
			order := "asc"
			if f.Desc {
				order = "desc"
			}
			r := &result{benchRow: benchRow{filter: filter, sort: f.SortBy + " " + order, page: page}}
			r.name = fmt.Sprintf("%s/sort=%s/desc=%t/page=%d", strings.ReplaceAll(filter, "/", "|"), f.SortBy, f.Desc, page)
			results = append(results, r)
			b.Run(r.name, func(b *testing.B) {
				var total int64
				for i := 0; i < b.N; i++ {
					var err error
					if _, total, err = s.List(ctx, f); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(total), "total")
				r.perOp, r.total = b.Elapsed()/time.Duration(b.N), total
			})
		}
	}
	for _, c := range combos {
		for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
			for _, desc := range []bool{true, false} {
				filter := []string{"scan=" + scanName[c.scan]}
				if c.sev != "" {
					filter = append(filter, "sev="+c.sev)
				}
				if c.state != "" {
					filter = append(filter, "state="+c.state)
				}
				measure(strings.Join(filter, ","), Filter{OrgID: org, Severity: c.sev, State: c.state, ScanID: c.scan, SortBy: sortBy, Desc: desc, Limit: 15})
			}
		}
	}
	// The search filters, alone and combined with each other and the spec's
	// filters, under the default sort (found_at, newest first), a severity
	// sort and an update-time sort.
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	searches := []struct {
		name string
		f    Filter
	}{
		{"since(~1/2)", Filter{FoundSince: day.Add(24 * time.Hour)}},
		{"since+until(1h)", Filter{FoundSince: day, FoundUntil: day.Add(time.Hour)}},
		{"repo(100k)", Filter{RepoKey: vocab.RepoKey("https://git.example.com/acme/repo3.git")}},
		{"category=xss(83k)", Filter{Category: "xss"}},
		{"tag=pci(10k)", Filter{Tag: "pci"}},
		{"tag=cwe-7(25k)", Filter{Tag: "cwe-7"}},
		{"file=src/svc7/(20k)", Filter{FilePrefix: "src/svc7/"}},
		{"file=src/svc7/pkg3/(2.9k)", Filter{FilePrefix: "src/svc7/pkg3/"}},
		{"q=handler4242(200)", Filter{Text: "handler4242"}},
		{"q=traversal(200k)", Filter{Text: "TRAVERSAL"}},
		{"q=handler42(22k,111 texts)", Filter{Text: "handler42"}},
		{"q=pkg3/file107(143,file)", Filter{Text: "pkg3/file107"}},
		{"q=validation(1M,all texts)", Filter{Text: "validation"}},
		{"q=traversal+state=open(40k)", Filter{Text: "traversal", State: "open"}},
		{"q=handler4242+repo", Filter{Text: "handler4242", RepoKey: vocab.RepoKey("https://git.example.com/acme/repo2")}},
		{"file=src/svc7/+state=open(none)", Filter{FilePrefix: "src/svc7/", State: "open"}},
		{"until(~1/2)", Filter{FoundUntil: day.Add(24 * time.Hour)}},
		{"repo+category+state=open", Filter{RepoKey: vocab.RepoKey("https://git.example.com/acme/repo3"), Category: "xss", State: "open"}},
		{"sev=high+tag=cwe-7+since", Filter{Severity: "high", Tag: "cwe-7", FoundSince: day}},
		{"scan42+q=sql", Filter{ScanID: scan, Text: "sql"}},
		{"rescan+file=src/svc7/", Filter{ScanID: rescan, FilePrefix: "src/svc7/"}},
		{"rescan+q=sql(20k)", Filter{ScanID: rescan, Text: "sql"}},
		{"rescan+q=handler42(2.2k,111 texts)", Filter{ScanID: rescan, Text: "handler42"}},
		{"scan42+tag=cwe-7", Filter{ScanID: scan, Tag: "cwe-7"}},
		{"rescan+tag=pci", Filter{ScanID: rescan, Tag: "pci"}},
		{"scan42+category=xss", Filter{ScanID: scan, Category: "xss"}},
		{"rescan+category=xss", Filter{ScanID: rescan, Category: "xss"}},
		{"rescan+repo", Filter{ScanID: rescan, RepoKey: vocab.RepoKey("https://git.example.com/acme/repo2")}},
		// Two search filters together, each matching many findings.
		{"file=src/svc7/+category=xss(3.3k)", Filter{FilePrefix: "src/svc7/", Category: "xss"}},
		{"file=src/svc7/+repo(2k)", Filter{FilePrefix: "src/svc7/", RepoKey: vocab.RepoKey("https://git.example.com/acme/repo3")}},
		{"q=handler42+category=xss(1.9k)", Filter{Text: "handler42", Category: "xss"}},
		{"q=traversal+repo(20k)", Filter{Text: "traversal", RepoKey: vocab.RepoKey("https://git.example.com/acme/repo3")}},
		{"tag=cwe-7+repo(2.5k)", Filter{Tag: "cwe-7", RepoKey: vocab.RepoKey("https://git.example.com/acme/repo3")}},
		{"tag=cwe-7+category=access_control(8.3k)", Filter{Tag: "cwe-7", Category: "access_control"}},
		{"tag=cwe-7+category=xss(none)", Filter{Tag: "cwe-7", Category: "xss"}},
		{"tag=cwe-7+q=sql(none)", Filter{Tag: "cwe-7", Text: "sql"}},
		{"tag=cwe-7+file=src/svc7/(5k)", Filter{Tag: "cwe-7", FilePrefix: "src/svc7/"}},
		{"file=src/svc7/+q=sql(none)", Filter{FilePrefix: "src/svc7/", Text: "sql"}},
		{"file=src/svc7/+q=credential(20k)", Filter{FilePrefix: "src/svc7/", Text: "credential"}},
		{"file=src/svc7/+q=handler4(4.4k,1111 texts)", Filter{FilePrefix: "src/svc7/", Text: "handler4"}},
		{"file=src/svc7/+q=validation(20k,all texts)", Filter{FilePrefix: "src/svc7/", Text: "validation"}},
		{"tag=pci+q=handler4200(200)", Filter{Tag: "pci", Text: "handler4200"}},
		// q over a fifth of the descriptions, alone and with a tag.
		{"q=handler4(222k,1111 texts)", Filter{Text: "handler4"}},
		{"tag=cwe-7+q=handler4(5.8k)", Filter{Tag: "cwe-7", Text: "handler4"}},
	}
	for _, sr := range searches {
		for _, sortBy := range []string{"found_at", "severity", "updated_at"} {
			f := sr.f
			f.OrgID, f.SortBy, f.Desc, f.Limit = org, sortBy, true, 15
			measure(searchPrefix+sr.name, f)
		}
	}
	// A scan's export (GET /v1/scans/{id}/findings/export): every matching
	// finding streamed in list order, page 0 in the table.
	exports := []struct {
		name string
		f    Filter
	}{
		{exportPrefix + "scan42(10k)", Filter{ScanID: scan}},
		{exportPrefix + "scan42+q=sql", Filter{ScanID: scan, Text: "sql"}},
		{exportPrefix + "rescan(100k)", Filter{ScanID: rescan}},
		{exportPrefix + "rescan+state=resolved", Filter{ScanID: rescan, State: "resolved"}},
	}
	// timeRow measures op, which returns the rows it read, as a row of
	// the table that is not a list page.
	timeRow := func(row benchRow, op func() (int64, error)) {
		r := &result{benchRow: row}
		r.name = strings.ReplaceAll(row.filter, "/", "|")
		results = append(results, r)
		b.Run(r.name, func(b *testing.B) {
			var n int64
			for i := 0; i < b.N; i++ {
				var err error
				if n, err = op(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "total")
			r.perOp, r.total = b.Elapsed()/time.Duration(b.N), n
		})
	}
	for _, ex := range exports {
		f := ex.f
		f.OrgID, f.SortBy, f.Desc = org, "severity", true
		timeRow(benchRow{filter: ex.name, sort: "severity desc"}, func() (n int64, err error) {
			err = s.Each(ctx, f, func(Finding, Extra) error { n++; return nil })
			return n, err
		})
	}
	for _, fl := range list1MFloors(ctx, b, pool, org) {
		timeRow(benchRow{filter: floorPrefix + fl.name}, func() (n int64, err error) {
			err = pool.QueryRow(ctx, fl.sql, fl.args...).Scan(&n)
			return n, err
		})
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].filter < results[j].filter })
	var t strings.Builder
	fmt.Fprintf(&t, "\n%-52s %-15s %5s %8s %8s\n", "filter", "sort", "page", "ms/op", "total")
	for _, r := range results {
		fmt.Fprintf(&t, "%-52s %-15s %5d %8.2f %8d\n", r.filter, r.sort, r.page, float64(r.perOp.Microseconds())/1000, r.total)
	}
	rows := make([]benchRow, len(results))
	for i, r := range results {
		rows[i] = r.benchRow
	}
	t.WriteString(benchSummary(rows))
	// Printed rather than logged: a benchmark's own log is shown only with -v.
	fmt.Print(t.String())
}

// list1MFloor is a statement that reads, and counts, the index entries an
// exact answer of a search must read at least, with nothing tested.
type list1MFloor struct {
	name string
	sql  string
	args []any
}

// list1MFloors returns the floors of BenchmarkList1M's slowest searches,
// the least work any statement giving their exact page or total does
// over the search indexes and counters, so that their rows can be read
// against what no test form or plan can go below:
//   - a file prefix with another search filter that no counter crosses
//     with a path (q, a tag): its exact total reads at least the smaller
//     side's entries, here the prefix's, through one lookup per path;
//   - a tag with another such filter: the tag's entries;
//   - q over many texts, page 1,000 in found_at order, read by walking the
//     list: the list's entries up to the page's last match.
func list1MFloors(ctx context.Context, b *testing.B, pool *pgxpool.Pool, org string) []list1MFloor {
	var paths, descs []string
	if err := pool.QueryRow(ctx, `SELECT
			(SELECT array_agg(key::text) FROM findings.search_files WHERE org_id = $1 AND path LIKE 'src/svc7/%'),
			(SELECT array_agg(key::text) FROM findings.search_texts WHERE org_id = $1 AND field = 'description' AND folded LIKE '%handler4%')`,
		org).Scan(&paths, &descs); err != nil {
		b.Fatal(err)
	}
	// The list entries, newest first, up to q's 15,000th match: what a
	// walk for page 1,000 passes.
	var walked int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM findings.findings f, (
			SELECT found_at, id FROM findings.findings WHERE org_id = $1 AND verification_status = 'approved' AND description_key = ANY($2::uuid[])
			ORDER BY found_at DESC, id DESC OFFSET 14999 LIMIT 1) m
		WHERE f.org_id = $1 AND f.verification_status = 'approved' AND (f.found_at, f.id) >= (m.found_at, m.id)`,
		org, db.UUIDArray(descs)).Scan(&walked); err != nil {
		b.Fatal(err)
	}
	return []list1MFloor{
		{fmt.Sprintf("file=src/svc7/: count via its %d paths", len(paths)),
			`SELECT count(*) FROM unnest($2::uuid[]) k(key) CROSS JOIN LATERAL (SELECT 1 FROM findings.findings f
				WHERE f.org_id = $1 AND f.verification_status = 'approved' AND f.file_key = k.key) x`,
			[]any{org, db.UUIDArray(paths)}},
		{"tag=cwe-7: count",
			`SELECT count(*) FROM findings.finding_tags t WHERE t.org_id = $1 AND t.approved AND t.tag = 'cwe-7'`,
			[]any{org}},
		{fmt.Sprintf("q=handler4 page 1000: walk of %d", walked),
			`SELECT count(*) FROM (SELECT f.id FROM findings.findings f WHERE f.org_id = $1 AND f.verification_status = 'approved'
				ORDER BY f.found_at DESC, f.id DESC LIMIT $2) x`,
			[]any{org, walked}},
	}
}
