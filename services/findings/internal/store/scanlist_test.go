package store

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// outOfSync counts the occurrences whose copied list keys, key columns or
// category differ from their finding's, or whose finding is of another
// repository than their scan (a scan's search relies on both), and the tag
// rows missing, left over, or whose copies of their finding's list keys,
// category and repository differ from it, and the scan tag counters
// (finding_scan_tag_counts) and tag search counters
// (finding_tag_search_counts) whose sum differs from a count of the
// approved findings by scan or by repository and category, tag, severity
// and state, the key search counters (finding_key_search_counts) whose
// sum differs from a count by key, repository, category, severity and
// state, the scan key counters (finding_scan_key_counts) whose sum
// differs from a count of the approved findings by scan, key, severity and
// state, and the text counters (search_text_counts) whose sum differs from
// the organization's distinct texts and paths.
func outOfSync(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	err := pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM findings.occurrences o JOIN findings.findings f ON f.id = o.finding_id
		JOIN findings.scans s ON s.id = o.scan_id
		WHERE (o.approved, o.severity_rank, o.state, o.found_at, o.updated_at, o.title_key, o.description_key, o.file_key, o.category, s.repo_key)
			IS DISTINCT FROM (f.verification_status = 'approved', f.severity_rank, f.state, f.found_at, f.updated_at,
				f.title_key, f.description_key, f.file_key, f.category, f.repo_key))
		+ (SELECT count(*) FROM findings.finding_tags t FULL JOIN (
			SELECT DISTINCT f.id, x.tag FROM findings.findings f CROSS JOIN LATERAL unnest(f.tags) x(tag)) e ON e.id = t.finding_id AND e.tag = t.tag
			LEFT JOIN findings.findings f ON f.id = e.id
		WHERE (t.org_id, t.approved, t.severity_rank, t.state, t.found_at, t.updated_at, t.category, t.repo_key,
				t.title_key, t.description_key, t.file_key)
			IS DISTINCT FROM (f.org_id, f.verification_status = 'approved', f.severity_rank, f.state, f.found_at, f.updated_at, f.category, f.repo_key,
				f.title_key, f.description_key, f.file_key))
		+ `+counterDrift("finding_scan_tag_counts", `SELECT f.org_id, o.scan_id, x.tag, f.severity_rank, f.state, count(*) AS n
			FROM findings.occurrences o JOIN findings.findings f ON f.id = o.finding_id
			CROSS JOIN LATERAL (SELECT DISTINCT tag FROM unnest(f.tags) t(tag)) x
			WHERE f.verification_status = 'approved' GROUP BY 1, 2, 3, 4, 5`)+`
		+ `+counterDrift("finding_tag_search_counts", `SELECT f.org_id, x.tag, f.repo_key, f.category, f.severity_rank, f.state, count(*) AS n
			FROM findings.findings f CROSS JOIN LATERAL (SELECT DISTINCT tag FROM unnest(f.tags) t(tag)) x
			WHERE f.verification_status = 'approved' GROUP BY 1, 2, 3, 4, 5, 6`)+`
		+ `+counterDrift("finding_key_search_counts", `SELECT f.org_id, k.field, k.key, f.repo_key, f.category, f.severity, f.state, count(*) AS n
			FROM findings.findings f CROSS JOIN LATERAL findings.finding_field_keys(f.title_key, f.description_key, f.file_key) k
			WHERE f.verification_status = 'approved' GROUP BY 1, 2, 3, 4, 5, 6, 7`)+`
		+ `+counterDrift("finding_scan_key_counts", `SELECT o.scan_id, k.field, k.key, f.severity_rank, f.state, count(*) AS n
			FROM findings.occurrences o JOIN findings.findings f ON f.id = o.finding_id
			CROSS JOIN LATERAL findings.finding_field_keys(f.title_key, f.description_key, f.file_key) k
			WHERE f.verification_status = 'approved' GROUP BY 1, 2, 3, 4, 5`)+`
		+ `+counterDrift("search_text_counts", `SELECT org_id, field, count(*) AS n FROM findings.search_texts GROUP BY 1, 2
			UNION ALL SELECT org_id, 'file', count(*) FROM findings.search_files GROUP BY 1`)).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// counterDrift renders the number of keys of a counter table (see
// counterTables) whose sum differs from truth, a query of the same key
// columns and the count n of each key.
func counterDrift(table, truth string) string {
	i := slices.IndexFunc(counterTables, func(c struct{ table, key string }) bool { return c.table == table })
	key := counterTables[i].key
	return `(SELECT count(*) FROM (
			SELECT ` + key + `, sum(n) AS n FROM findings.` + table + ` GROUP BY ` + key + ` HAVING sum(n) <> 0
		) c FULL JOIN (` + truth + `) e USING (` + key + `)
		WHERE c.n IS DISTINCT FROM e.n)`
}

// scanMembers returns the findings with an occurrence in scan, from the
// occurrences' finding ids alone (not their copies of the findings' keys).
func scanMembers(t *testing.T, s *Store, scan string) map[string]bool {
	t.Helper()
	rows, err := s.Pool.Query(context.Background(), `SELECT finding_id::text FROM findings.occurrences WHERE scan_id = $1`, scan)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]bool{}
	for _, id := range ids {
		in[id] = true
	}
	return in
}

// scanReference returns the findings f (which names a scan) selects,
// computed from the organization's findings in f's order without the scan,
// kept when the scan has an occurrence of them (in, see scanMembers).
func scanReference(t *testing.T, s *Store, f Filter, in map[string]bool) []string {
	t.Helper()
	all := f
	all.ScanID = ""
	var want []string
	for _, id := range eachID(t, s, all) {
		if in[id] {
			want = append(want, id)
		}
	}
	return want
}

// eachID returns the ids Each streams for f, in order.
func eachID(t *testing.T, s *Store, f Filter) []string {
	t.Helper()
	var ids []string
	if err := s.Each(context.Background(), f, func(fd Finding, _ Extra) error {
		ids = append(ids, fd.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// checkScanLists compares every scan-filtered list (each filter, sort,
// order and page size) and export with the same list computed from the
// findings themselves (the organization's, in order, that have an
// occurrence in the scan), and its total with the number of matches.
func checkScanLists(t *testing.T, s *Store, org string, scans []string) {
	t.Helper()
	for _, scan := range scans {
		in := scanMembers(t, s, scan)
		for _, sev := range append([]string{""}, Severities...) {
			for _, state := range append([]string{""}, States...) {
				for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
					for _, desc := range []bool{false, true} {
						f := Filter{OrgID: org, ScanID: scan, Severity: sev, State: state, SortBy: sortBy, Desc: desc}
						want := scanReference(t, s, f, in)
						label := fmt.Sprintf("scan %s sev=%q state=%q sort=%s desc=%t", scan, sev, state, sortBy, desc)
						if got := eachID(t, s, f); fmt.Sprint(got) != fmt.Sprint(want) {
							t.Fatalf("%s: export\n got %v\nwant %v", label, got, want)
						}
						checkPages(t, s, f, want, []int{1, 4, 100}, label)
					}
				}
			}
		}
	}
}

// checkPages lists f in pages of each size, through one page past the end,
// and fails unless every page is the matching slice of want and every
// total is len(want).
func checkPages(t *testing.T, s *Store, f Filter, want []string, limits []int, label string) {
	t.Helper()
	for _, limit := range limits {
		for off := 0; off == 0 || off < len(want)+limit; off += limit {
			f.Limit, f.Offset = limit, off
			list, total, err := s.List(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, fd := range list {
				got = append(got, fd.ID)
			}
			exp := want[min(off, len(want)):min(off+limit, len(want))]
			if fmt.Sprint(got) != fmt.Sprint(exp) || total != int64(len(want)) {
				t.Fatalf("%s limit=%d offset=%d:\n got %v total %d\nwant %v total %d", label, limit, off, got, total, exp, len(want))
			}
		}
	}
}

func reported(prefix string, n int) []Reported {
	var out []Reported
	for i := range n {
		out = append(out, Reported{Fingerprint: fmt.Sprintf("%s%d", prefix, i), Title: "t", Category: "injection", AffectedFile: fmt.Sprintf("src/f%d.go", i%3),
			Severity: Severities[i%len(Severities)], Verified: i%6 != 5})
	}
	return out
}

// TestScanListKeysFollowFindings changes findings in every way the service
// does and checks after each change that the occurrences' copies of the
// list keys follow, and that scan-filtered lists and totals equal what the
// findings themselves say.
func TestScanListKeysFollowFindings(t *testing.T) {
	ctx := context.Background()
	s, pool := migratedStore(t)
	org, other := uuid.NewString(), uuid.NewString()
	repo := "https://git.example.com/acme/app"
	scanA := Scan{ID: uuid.NewString(), OrgID: org, RepoURL: repo, ScanType: "full"}
	scanB := Scan{ID: uuid.NewString(), OrgID: org, RepoURL: repo + ".git", ScanType: "pr"}
	scanX := Scan{ID: uuid.NewString(), OrgID: other, RepoURL: repo, ScanType: "full"}
	for _, sc := range []Scan{scanA, scanB, scanX} {
		if _, err := s.RegisterScan(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	ids := map[string]string{} // fingerprint → finding id
	report := func(sc Scan, batch []Reported) {
		for i := range batch { // tags, whose rows copy their findings' keys too
			batch[i].Tags = []string{fmt.Sprintf("cwe-%d", i%3), "pci"}
		}
		res, err := s.Report(ctx, sc, batch, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if sc.OrgID == org {
				ids[r.Fingerprint] = r.FindingID
			}
		}
	}
	actor := Actor{UserID: uuid.NewString(), Username: "ana", Source: "api"}
	apply := func(fp string, u Update) {
		if _, err := s.Apply(ctx, org, ids[fp], u, actor); err != nil {
			t.Fatalf("apply to %s: %v", fp, err)
		}
	}
	verify := func(fp, status string) {
		if _, err := s.SetVerification(ctx, ids[fp], status); err != nil {
			t.Fatal(err)
		}
	}
	ptr := func(s string) *string { return &s }

	steps := []struct {
		name   string
		change func()
	}{
		{"first scan reports, some verified", func() { report(scanA, reported("a", 24)) }},
		{"another organization's scan", func() { report(scanX, reported("a", 10)) }},
		{"pending findings approved", func() { verify("a5", Approved); verify("a11", Approved) }},
		{"an approved finding rejected", func() { verify("a3", Rejected) }},
		{"states changed", func() {
			apply("a0", Update{State: ptr("resolved")})
			apply("a1", Update{State: ptr("true_positive")})
			apply("a2", Update{State: ptr("accepted_risk")})
			apply("a4", Update{State: ptr("false_positive")})
		}},
		{"severities changed", func() {
			apply("a6", Update{Severity: ptr("info")})
			apply("a7", Update{Severity: ptr("critical"), State: ptr("resolved")})
		}},
		{"marked duplicate", func() { apply("a8", Update{DuplicateSet: true, DuplicateOf: ptr(ids["a9"])}) }},
		{"a later scan sees findings again, reopens the resolved and approves the verified", func() {
			again := reported("a", 12)
			again[5].Verified, again[11].Verified = true, true
			report(scanB, append(again, reported("b", 7)...))
		}},
		{"duplicate link removed", func() { apply("a8", Update{DuplicateSet: true}) }},
		{"reopened finding resolved again", func() { apply("a0", Update{State: ptr("resolved"), Severity: ptr("high")}) }},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.change()
			if n := outOfSync(t, pool); n != 0 {
				t.Fatalf("%d occurrences, tag rows, tag counters, key search counters or text counters out of step with their findings", n)
			}
			checkScanLists(t, s, org, []string{scanA.ID, scanB.ID})
			// A scan of another organization lists nothing.
			list, total, err := s.List(ctx, Filter{OrgID: org, ScanID: scanX.ID, SortBy: "found_at", Limit: 15})
			if err != nil || len(list) != 0 || total != 0 {
				t.Fatalf("foreign scan: %d findings, total %d, %v", len(list), total, err)
			}
		})
	}
	// Updating a finding's keys directly (as a migration or an operator
	// might) is copied too.
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET found_at = found_at - interval '1 day', updated_at = now() + interval '1 hour'
		WHERE id = $1`, ids["a10"]); err != nil {
		t.Fatal(err)
	}
	// So is a change of a finding's texts, which only an operator or a
	// migration makes.
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET title = 'renamed', affected_file = 'lib/moved.go' WHERE id = $1`, ids["a4"]); err != nil {
		t.Fatal(err)
	}
	if n := outOfSync(t, pool); n != 0 {
		t.Fatalf("%d occurrences, tag rows, tag counters, key search counters or text counters out of step after a direct update", n)
	}
	checkScanLists(t, s, org, []string{scanA.ID, scanB.ID})
	// An unknown severity matches nothing.
	list, _, err := s.List(ctx, Filter{OrgID: org, ScanID: scanA.ID, Severity: "bogus", SortBy: "found_at", Limit: 15})
	if err != nil || len(list) != 0 {
		t.Fatalf("unknown severity: %d findings, %v", len(list), err)
	}
}

// TestOccurrenceKeysBackfilled applies the first migration, records
// findings, then the rest: existing occurrences get their findings' keys,
// and existing tags their rows with the findings' keys, categories and
// repositories.
func TestOccurrenceKeysBackfilled(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.New(t)
	first, err := fs.ReadFile(migrations, "migrations/0001_init.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, pool, Schema, fstest.MapFS{"0001_init.up.sql": {Data: first}}); err != nil {
		t.Fatal(err)
	}
	org := uuid.NewString()
	for _, q := range []string{
		`INSERT INTO findings.scans (id, org_id, repo_url, repo_key, scan_type) VALUES
			('00000000-0000-0000-0000-00000000000a', $1, 'r', 'r', 'full'), ('00000000-0000-0000-0000-00000000000b', $1, 'r', 'r', 'full')`,
		`INSERT INTO findings.findings (id, org_id, repo_key, fingerprint, scan_id, title, category, severity, severity_rank, state,
			verification_status, found_at, updated_at, tags)
			SELECT gen_random_uuid(), $1, 'r', 'fp' || g, '00000000-0000-0000-0000-00000000000a', 't', (ARRAY['injection','xss'])[1 + g % 2],
				(ARRAY['critical','high','medium','low','info'])[1 + g % 5], 5 - g % 5,
				(ARRAY['open','true_positive','false_positive','accepted_risk','resolved'])[1 + g % 5],
				(ARRAY['approved','pending','rejected'])[1 + g % 3], now() - g * interval '1 hour', now() - g * interval '1 minute',
				ARRAY['cwe-' || g % 3, 'pci']
			FROM generate_series(0, 29) g`,
		`INSERT INTO findings.occurrences (scan_id, finding_id) SELECT scan_id, id FROM findings.findings WHERE org_id = $1`,
		`INSERT INTO findings.occurrences (scan_id, finding_id) SELECT '00000000-0000-0000-0000-00000000000b', id FROM findings.findings
			WHERE org_id = $1 AND fingerprint < 'fp2'`,
	} {
		if _, err := pool.Exec(ctx, q, org); err != nil {
			t.Fatal(err)
		}
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM findings.occurrences`).Scan(&n); err != nil || n < 40 {
		t.Fatalf("occurrences: %d, %v", n, err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM findings.finding_tags`).Scan(&n); err != nil || n != 60 {
		t.Fatalf("tag rows: %d, %v", n, err)
	}
	if n := outOfSync(t, pool); n != 0 {
		t.Fatalf("%d occurrences or tag rows not backfilled", n)
	}
	checkScanLists(t, &Store{Pool: pool}, org, []string{"00000000-0000-0000-0000-00000000000a", "00000000-0000-0000-0000-00000000000b"})
}

// TestExportReadsOnlyItsScan: an export of a scan's findings reads the
// scan's occurrences and their findings, with either plan, whatever else
// the organization holds (it used to check each of the organization's
// findings for an occurrence in the scan), and streams them in list order.
func TestExportReadsOnlyItsScan(t *testing.T) {
	u := newUnit(t)
	u.largeScan(1200, "injection")
	sc := u.scan("https://git.example.com/acme/app")
	var batch []Reported
	for i, sev := range []string{"low", "critical", "medium", "high", "low"} {
		batch = append(batch, Reported{Fingerprint: fmt.Sprintf("app-%d", i), Title: "t", Category: "injection", Severity: sev, Verified: i != 4})
	}
	_, err := u.s.Report(u.ctx, sc, batch, true)
	require.NoError(t, err)
	in := scanMembers(t, u.s, sc.ID)
	f := Filter{OrgID: u.org, ScanID: sc.ID, SortBy: "severity", Desc: true}
	want := scanReference(t, u.s, f, in)
	require.Len(t, want, 4, "the scan's approved findings")
	require.Equal(t, want, eachID(t, u.s, f))

	sql, args := f.eachQuery()
	for _, mode := range planModes {
		t.Run(mode, func(t *testing.T) {
			p := u.prepare(t, mode, "export_scan", "", sql, args...)
			assert.LessOrEqual(t, findingsRead(p), float64(len(in)), "findings rows read: the scan's")
		})
	}
}

// TestScanFiltersReadNoFindings: a scan's findings with a tag, a category
// or a repository are found without reading the findings: the tag's rows
// each checked against the scan's occurrences, the occurrences' copies of
// their findings' categories (migration 0032), the scan's own repository.
// With either plan the total reads no finding, however many findings of
// the organization carry the tag or the category (each tag row's finding,
// or each occurrence's, used to be read), and the pages are the scan's.
func TestScanFiltersReadNoFindings(t *testing.T) {
	u := newUnit(t)
	large := u.largeScan(1200, "xss", "pci")
	sc := u.scan("https://git.example.com/acme/app")
	var batch []Reported
	for i := range 6 {
		tags, category := []string{"pci"}, "xss"
		if i%3 == 0 {
			tags, category = []string{"gdpr"}, "injection"
		}
		batch = append(batch, Reported{Fingerprint: fmt.Sprintf("app-%d", i), Title: "t", Category: category, Severity: "low", Verified: i != 5, Tags: tags})
	}
	_, err := u.s.Report(u.ctx, sc, batch, true)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		f    Filter
		want int
	}{
		{"tag", Filter{Tag: "pci"}, 3},
		{"category", Filter{Category: "xss"}, 3},
		{"category_severity", Filter{Category: "injection", Severity: "low"}, 2},
		{"repository", Filter{RepoKey: sc.repoKey()}, 5},
		{"other_repository", Filter{RepoKey: large.repoKey()}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.OrgID, f.ScanID, f.SortBy, f.Desc, f.Limit = u.org, sc.ID, "found_at", true, 2
			got, total := listIDs(t, u.s, f)
			require.EqualValues(t, tc.want, total)
			all := f
			all.Limit = 10
			want := eachID(t, u.s, all)
			require.Len(t, want, tc.want)
			require.Equal(t, want[:min(2, len(want))], got)

			_, _, count, countArgs := f.Queries()
			for _, mode := range planModes {
				c := u.prepare(t, mode, "scan_filter_count_"+tc.name, "", count, countArgs...)
				assert.Zero(t, findingsRead(c), "%s: findings rows read for the total", mode)
			}
		})
	}
}
