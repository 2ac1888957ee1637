package store

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/vocab"
)

func TestPrefixEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"src/", "src0", true},
		{"a", "b", true},
		{"é", "ê", true},
		{"a\U0010FFFF", "b", true},
		{"\U0010FFFF", "", false},
		{"x\uD7FF", "x\uE000", true},
		{"", "", false},
	} {
		got, ok := prefixEnd(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("prefixEnd(%q) = %q, %t; want %q, %t", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestEscapeLike(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{`a_b`: `a\_b`, `100%`: `100\%`, `c:\x`: `c:\\x`, `plain`: `plain`} {
		if got := EscapeLike(in); got != want {
			t.Errorf("EscapeLike(%q) = %q, want %q", in, got, want)
		}
	}
}

// migratedStore returns a store on a database of its own with the schema.
func migratedStore(t *testing.T) (*Store, *pgxpool.Pool) {
	t.Helper()
	pool := dbtest.Migrated(t, "findings_search_keys", Migrate)
	return &Store{Pool: pool}, pool
}

// newScan registers a full scan of a repository of a new organization.
func newScan(t *testing.T, s *Store) Scan {
	t.Helper()
	sc := Scan{ID: uuid.NewString(), OrgID: uuid.NewString(), RepoURL: "https://git.example.com/acme/app", ScanType: "full"}
	if _, err := s.RegisterScan(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	return sc
}

// trigramIndexes returns the names of q's trigram indexes on the distinct
// texts and paths, in name order.
func trigramIndexes(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT indexname FROM pg_indexes
		WHERE schemaname = 'findings' AND tablename IN ('search_texts', 'search_files') AND indexdef LIKE '%gin_trgm_ops%'
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// orgTrigramIndexes are q's trigram indexes led by the organization
// (migration 0030), on a server with pg_trgm and btree_gin.
var orgTrigramIndexes = []string{"search_files_org_trgm", "search_texts_org_trgm"}

// migrationsBefore returns the findings migrations numbered below version.
func migrationsBefore(tb testing.TB, version string) fstest.MapFS {
	tb.Helper()
	before := fstest.MapFS{}
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() < version {
			data, err := fs.ReadFile(migrations, "migrations/"+e.Name())
			if err != nil {
				tb.Fatal(err)
			}
			before[e.Name()] = &fstest.MapFile{Data: data}
		}
	}
	return before
}

// TestSearchFilters records findings of two repositories (and another
// organization's with the same texts), then checks every search filter,
// alone, combined with each other and with the spec's filters, under every
// sort and through every page, against the same selection made in Go from
// the unfiltered list; totals must equal the number of matches.
func TestSearchFilters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := migratedStore(t)
	if idx := trigramIndexes(t, pool); !slices.Equal(idx, orgTrigramIndexes) {
		t.Fatalf("trigram indexes %q, want %q on a server with pg_trgm and btree_gin", idx, orgTrigramIndexes)
	}
	org, other := uuid.NewString(), uuid.NewString()
	repoA, repoB := "https://git.example.com/acme/app", "https://git.example.com/acme/lib"
	scans := []Scan{
		{ID: uuid.NewString(), OrgID: org, RepoURL: repoA, ScanType: "full"},
		{ID: uuid.NewString(), OrgID: org, RepoURL: "HTTPS://Git.Example.com/acme/lib.git/", ScanType: "full"},
		{ID: uuid.NewString(), OrgID: org, RepoURL: repoA + ".git", ScanType: "pr"},
		{ID: uuid.NewString(), OrgID: other, RepoURL: repoA, ScanType: "full"},
	}
	repoOf := map[string]string{}
	for _, sc := range scans {
		if _, err := s.RegisterScan(ctx, sc); err != nil {
			t.Fatal(err)
		}
		repoOf[sc.ID] = vocab.RepoKey(sc.RepoURL)
	}
	files := []string{"src/a_b.go", "src/axb.go", "src/100%/x.go", "src/db/query.go", "SRC/db/Query.go", "lib/util.py", `win\path.c`, ""}
	titles := []string{"SQL injection in query", "Reflected XSS", "Hard-coded secret", "Path traversal in upload"}
	batch := func(prefix string, n int) []Reported {
		var out []Reported
		for i := range n {
			r := Reported{Fingerprint: fmt.Sprintf("%s%d", prefix, i), Title: titles[i%len(titles)] + fmt.Sprintf(" #%d", i),
				Category: Categories[i%4], Severity: Severities[i%len(Severities)], AffectedFile: files[i%len(files)],
				Description: fmt.Sprintf("Found by rule R%d; 50%% of callers pass user_input", i%7), Verified: i%9 != 8}
			switch i % 3 {
			case 0:
				r.Tags = []string{"cwe-89", "pci"}
			case 1:
				r.Tags = []string{"cwe-79"}
			}
			out = append(out, r)
		}
		return out
	}
	for i, sc := range scans {
		if _, err := s.Report(ctx, sc, batch(fmt.Sprintf("s%d-", i%2), 40), true); err != nil {
			t.Fatal(err)
		}
		// Spread found_at so that windows cut between findings, and
		// whole hours and parts of hours hold some.
		if _, err := pool.Exec(ctx, `UPDATE findings.findings SET found_at = timestamptz '2026-03-01' + $2 * interval '1 day' + (fingerprint_n * interval '37 minutes')
			FROM (SELECT id AS fid, row_number() OVER (ORDER BY fingerprint) AS fingerprint_n FROM findings.findings WHERE scan_id = $1) n
			WHERE id = n.fid`, sc.ID, i); err != nil {
			t.Fatal(err)
		}
	}
	// Triage a few so that state filters bite.
	all, _, err := s.List(ctx, Filter{OrgID: org, SortBy: "found_at", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	resolved := "resolved"
	for _, fd := range all[:10] {
		if _, err := s.Apply(ctx, org, fd.ID, Update{State: &resolved}, Actor{UserID: uuid.NewString(), Username: "ana", Source: "api"}); err != nil {
			t.Fatal(err)
		}
	}
	// Fold some counter keys and leave others pending: totals are sums
	// over both.
	if _, err := s.FoldCounts(ctx, 3); err != nil {
		t.Fatal(err)
	}
	all, _, err = s.List(ctx, Filter{OrgID: org, SortBy: "found_at", Limit: 1000})
	if err != nil || len(all) < 60 {
		t.Fatalf("seeded %d findings, %v", len(all), err)
	}
	inScan := map[string]map[string]bool{}
	for _, sc := range scans[:3] {
		inScan[sc.ID] = scanMembers(t, s, sc.ID)
	}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	matches := func(f Filter, fd Finding) bool { return filterMatches(f, fd, inScan, repoOf) }
	cases := []struct {
		name string
		f    Filter
		min  int // the case must match at least this many, so it cannot pass vacuously
	}{
		{"since", Filter{FoundSince: at("2026-03-02T10:00:00Z")}, 10},
		{"until", Filter{FoundUntil: at("2026-03-02T10:00:00Z")}, 10},
		{"window", Filter{FoundSince: at("2026-03-02T00:00:00Z"), FoundUntil: at("2026-03-03T00:00:00Z")}, 10},
		{"repo", Filter{RepoKey: vocab.RepoKey(repoB)}, 10},
		{"category", Filter{Category: "xss"}, 10},
		{"tag", Filter{Tag: "pci"}, 10},
		{"tag is exact", Filter{Tag: "pc"}, 0},
		{"file prefix", Filter{FilePrefix: "src/"}, 10},
		{"file prefix underscore is literal", Filter{FilePrefix: "src/a_"}, 2},
		{"file prefix percent is literal", Filter{FilePrefix: "src/100%"}, 2},
		{"file prefix backslash", Filter{FilePrefix: `win\`}, 2},
		{"file prefix is case-sensitive", Filter{FilePrefix: "SRC/"}, 2},
		{"text in title, any case", Filter{Text: "sql INJECTION"}, 10},
		{"text in description with metacharacters", Filter{Text: "50% of callers pass user_"}, 10},
		{"text percent alone", Filter{Text: "%"}, 10},
		{"text in file", Filter{Text: "query.go"}, 5},
		{"text absent", Filter{Text: "no such words"}, 0},
		{"text never spans two fields", Filter{Text: "upload #3\nFound by"}, 0},
		{"text in title and in file", Filter{Text: "query"}, 10},
		{"text with severity and state", Filter{Text: "sql", Severity: "high", State: "open"}, 1},
		{"text and file prefix", Filter{Text: "xss", FilePrefix: "src/"}, 2},
		{"file prefix with state", Filter{FilePrefix: "src/", State: "resolved"}, 1},
		{"text with category", Filter{Text: "rule r3", Category: "auth"}, 1},
		{"everything", Filter{RepoKey: vocab.RepoKey(repoA), Category: "injection", Tag: "pci", FilePrefix: "src/", Text: "sql",
			FoundSince: at("2026-03-01T00:00:00Z"), FoundUntil: at("2026-04-01T00:00:00Z")}, 1},
		{"with severity and state", Filter{Tag: "cwe-79", Severity: "high", State: "open"}, 1},
		{"with scan", Filter{ScanID: scans[2].ID, Text: "xss"}, 2},
		{"with scan and state", Filter{ScanID: scans[0].ID, State: "resolved", FilePrefix: "src"}, 1},
		// Totals from the search counters, and tag pages from the tag rows,
		// after triage changed states and found_at was moved.
		{"repo and state", Filter{RepoKey: vocab.RepoKey(repoA), State: "resolved"}, 1},
		{"repo and category", Filter{RepoKey: vocab.RepoKey(repoB), Category: "auth"}, 2},
		{"category, severity and state", Filter{Category: Categories[0], Severity: "critical", State: "open"}, 1},
		{"window of whole hours and parts", Filter{FoundSince: at("2026-03-02T07:20:00Z"), FoundUntil: at("2026-03-03T19:50:00Z")}, 10},
		{"window within an hour", Filter{FoundSince: at("2026-03-02T07:20:00Z"), FoundUntil: at("2026-03-02T07:59:00Z")}, 1},
		{"since in an hour, severity", Filter{FoundSince: at("2026-03-01T13:05:00Z"), Severity: "high"}, 5},
		{"until in an hour, state", Filter{FoundUntil: at("2026-03-02T05:45:00Z"), State: "resolved"}, 1},
		// A window from or to a whole hour (a date, most often) has no
		// part of an hour to count row by row.
		{"severity since a whole hour", Filter{Severity: "high", FoundSince: at("2026-03-02T00:00:00Z")}, 5},
		{"severity and state until a whole hour", Filter{Severity: "critical", State: "open", FoundUntil: at("2026-03-03T00:00:00Z")}, 2},
		{"state between whole hours", Filter{State: "resolved", FoundSince: at("2026-03-01T00:00:00Z"), FoundUntil: at("2026-03-04T00:00:00Z")}, 1},
		{"severity between whole hours", Filter{Severity: "low", FoundSince: at("2026-03-02T00:00:00Z"), FoundUntil: at("2026-03-02T12:00:00Z")}, 1},
		{"tag and state", Filter{Tag: "pci", State: "resolved"}, 1},
		{"tag in window", Filter{Tag: "cwe-79", FoundSince: at("2026-03-02T00:00:00Z"), FoundUntil: at("2026-03-03T00:00:00Z")}, 2},
		{"tag with repo and scan", Filter{Tag: "cwe-89", RepoKey: vocab.RepoKey(repoA), ScanID: scans[2].ID}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
				for _, desc := range []bool{false, true} {
					f := tc.f
					f.OrgID, f.SortBy, f.Desc = org, sortBy, desc
					var want []string
					base := Filter{OrgID: org, SortBy: sortBy, Desc: desc, Limit: 1000}
					ordered, _, err := s.List(ctx, base)
					if err != nil {
						t.Fatal(err)
					}
					for _, fd := range ordered {
						if matches(f, fd) {
							want = append(want, fd.ID)
						}
					}
					if len(want) < tc.min || (tc.min == 0 && len(want) != 0) {
						t.Fatalf("fixture gives %d matches, want at least %d", len(want), tc.min)
					}
					checkPages(t, s, f, want, []int{7, 100}, fmt.Sprintf("sort=%s desc=%t", sortBy, desc))
					// The export streams the same selection.
					var exported []string
					if err := s.Each(ctx, f, func(fd Finding, _ Extra) error {
						exported = append(exported, fd.ID)
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					if fmt.Sprint(exported) != fmt.Sprint(want) {
						t.Fatalf("export sort=%s desc=%t: got %d findings, want %d", sortBy, desc, len(exported), len(want))
					}
				}
			}
		})
	}
}

// filterMatches reports whether fd matches f's filters as the API defines
// them, computed in Go from the finding itself: inScan holds each scan's
// findings (its occurrences) and repoOf each scan's repository key. It is
// the reference the search tests check List, Count and Each against.
func filterMatches(f Filter, fd Finding, inScan map[string]map[string]bool, repoOf map[string]string) bool {
	lower := strings.ToLower
	switch {
	case f.ScanID != "" && !inScan[f.ScanID][fd.ID],
		f.Severity != "" && fd.Severity != f.Severity,
		f.State != "" && fd.State != f.State,
		!f.FoundSince.IsZero() && fd.FoundAt.Before(f.FoundSince),
		!f.FoundUntil.IsZero() && !fd.FoundAt.Before(f.FoundUntil),
		f.RepoKey != "" && repoOf[fd.ScanID] != f.RepoKey,
		f.Category != "" && fd.Category != f.Category,
		f.Tag != "" && !slices.Contains(fd.Tags, f.Tag),
		f.FilePrefix != "" && !strings.HasPrefix(fd.AffectedFile, f.FilePrefix),
		f.Text != "" && !slices.ContainsFunc([]string{fd.Title, fd.Description, fd.AffectedFile}, func(field string) bool {
			return strings.Contains(lower(field), lower(f.Text))
		}):
		return false
	}
	return true
}

// TestSearchIndexUnderServiceRole migrates the schema as the findings
// service's own role, which may not create extensions: with pg_trgm and
// btree_gin created by role provisioning, q's trigram indexes are led by
// the organization; on a database with pg_trgm alone they span every
// organization (migration 0023's), and on one without either there are
// none. The migration succeeds in each case, and q finds what it should.
// Once provisioning creates the missing extensions, the next start builds
// the indexes led by the organization.
func TestSearchIndexUnderServiceRole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		drop    []string // extensions dropped after provisioning
		indexes []string
	}{
		{nil, orgTrigramIndexes},
		{[]string{"btree_gin"}, []string{"search_files_trgm", "search_texts_trgm"}},
		{[]string{"btree_gin", "pg_trgm"}, nil},
	} {
		t.Run("without="+strings.Join(tc.drop, ","), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			admin, drop, err := dbtest.CreateDatabase(ctx, "vssearch")
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := pgx.ParseConfig(admin)
			if err != nil {
				t.Fatal(err)
			}
			prefix := cfg.Database + "_"
			t.Cleanup(func() {
				drop()
				c, err := pgx.Connect(ctx, strings.Replace(admin, "/"+cfg.Database+"?", "/postgres?", 1))
				if err != nil {
					return
				}
				defer func() { _ = c.Close(ctx) }()
				for _, svc := range db.Services {
					_, _ = c.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{prefix + svc}.Sanitize())
				}
			})
			urls, err := db.ProvisionRoles(ctx, admin, db.RoleOptions{Prefix: prefix, Services: []string{"findings"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.drop) > 0 {
				c, err := pgx.Connect(ctx, admin)
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.Exec(ctx, "DROP EXTENSION "+strings.Join(tc.drop, ", "))
				_ = c.Close(ctx)
				if err != nil {
					t.Fatal(err)
				}
			}
			pool, err := pgxpool.New(ctx, urls["findings"])
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			if err := Migrate(ctx, pool); err != nil {
				t.Fatalf("migrate as the service role: %v", err)
			}
			if idx := trigramIndexes(t, pool); !slices.Equal(idx, tc.indexes) {
				t.Fatalf("trigram indexes %q, want %q", idx, tc.indexes)
			}
			s := &Store{Pool: pool}
			sc := newScan(t, s)
			org := sc.OrgID
			if _, err := s.Report(ctx, sc, []Reported{
				{Fingerprint: "a", Title: "SQL injection", Category: "injection", Severity: "high", Verified: true},
				{Fingerprint: "b", Title: "XSS", Category: "xss", Severity: "low", Verified: true},
			}, true); err != nil {
				t.Fatal(err)
			}
			findsSQL := func(when string) {
				t.Helper()
				list, total, err := s.List(ctx, Filter{OrgID: org, Text: "sql", SortBy: "found_at", Limit: 15})
				if err != nil || total != 1 || len(list) != 1 || list[0].Title != "SQL injection" {
					t.Fatalf("%sq=sql: %v total %d, %v", when, list, total, err)
				}
			}
			findsSQL("")
			if len(tc.drop) == 0 {
				return
			}
			// Provisioning run again (as on an upgrade, where a service may
			// start before it): the next start builds the indexes led by
			// the organization, and q still finds the same.
			if _, err := db.ProvisionRoles(ctx, admin, db.RoleOptions{Prefix: prefix, Services: []string{"findings"}}); err != nil {
				t.Fatal(err)
			}
			if err := Migrate(ctx, pool); err != nil {
				t.Fatalf("migrate again: %v", err)
			}
			if idx := trigramIndexes(t, pool); !slices.Equal(idx, orgTrigramIndexes) {
				t.Fatalf("after provisioning: trigram indexes %q, want %q", idx, orgTrigramIndexes)
			}
			findsSQL("after provisioning, ")
		})
	}
}

// TestQueriesAreWhatListRuns runs the SQL Queries gives, as a benchmark
// floor does, and gets exactly what List answers: same rows in the same
// order, same total.
func TestQueriesAreWhatListRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := migratedStore(t)
	sc := newScan(t, s)
	org := sc.OrgID
	if _, err := s.Report(ctx, sc, reported("q", 40), true); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Filter{
		{SortBy: "found_at", Desc: true, Limit: 15},
		{SortBy: "found_at", Desc: true, Limit: 15, Offset: 15},
		{Severity: "high", State: "open", SortBy: "severity", Desc: true, Limit: 15},
		{ScanID: sc.ID, SortBy: "updated_at", Limit: 7, Offset: 7},
		{ScanID: sc.ID, Category: "injection", SortBy: "severity", Limit: 10},
		{Text: "T", SortBy: "found_at", Desc: true, Limit: 15},
		{FilePrefix: "src/", Severity: "high", SortBy: "severity", Limit: 5, Offset: 2},
	} {
		f.OrgID = org
		want, wantTotal, err := s.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || wantTotal == 0 {
			t.Fatalf("%+v: empty fixture", f)
		}
		f, err = s.Resolve(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		got, n := runQueries(t, pool, f)
		if fmt.Sprint(got) != fmt.Sprint(want) || n != wantTotal {
			t.Fatalf("%+v: Queries give %d rows total %d, List %d rows total %d", f, len(got), n, len(want), wantTotal)
		}
	}
}

// runQueries runs the page and the total Queries gives for f.
func runQueries(t *testing.T, pool *pgxpool.Pool, f Filter) ([]Finding, int64) {
	t.Helper()
	ctx := context.Background()
	page, pageArgs, total, totalArgs := f.Queries()
	rows, err := pool.Query(ctx, page, pageArgs...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Finding, error) { return scanFinding(r) })
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := pool.QueryRow(ctx, total, totalArgs...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return got, n
}

// TestSearchDrivers runs q and file prefix searches, with and without a
// scan, both ways a page can be found (reading the keys' indexes, walking
// the list or the scan) and gets what List answers either way.
func TestSearchDrivers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool, sc := reportedScan(t, "d", 60, func(i int, r *Reported) {
		r.Title = fmt.Sprintf("Rule %d finding", i%4)
		r.Description = fmt.Sprintf("Sink %d", i%5)
	})
	for _, f := range []Filter{
		{Text: "rule", SortBy: "found_at", Desc: true, Limit: 7, Offset: 7},
		{Text: "rule 2", SortBy: "severity", Limit: 5},
		{Text: "F1", State: "open", SortBy: "updated_at", Limit: 4, Offset: 3},
		{Text: "sink", ScanID: sc.ID, SortBy: "found_at", Limit: 10, Offset: 20},
		{FilePrefix: "src/f", Severity: "high", SortBy: "found_at", Desc: true, Limit: 3, Offset: 1},
		{FilePrefix: "src/f2", ScanID: sc.ID, Text: "rule", SortBy: "severity", Desc: true, Limit: 3},
	} {
		f.OrgID = sc.OrgID
		want, wantTotal, err := s.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatalf("%+v: empty fixture", f)
		}
		r, err := s.Resolve(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, walk := range []bool{false, true} {
			r.keys.walk = walk
			got, n := runQueries(t, pool, r)
			if fmt.Sprint(got) != fmt.Sprint(want) || n != wantTotal {
				t.Fatalf("%+v walk=%t: %d rows total %d, List %d rows total %d", f, walk, len(got), n, len(want), wantTotal)
			}
		}
	}
}

// reportedScan reports, into a new scan of a fresh store, n findings as
// reported gives them after edit.
func reportedScan(t *testing.T, prefix string, n int, edit func(i int, r *Reported)) (*Store, *pgxpool.Pool, Scan) {
	t.Helper()
	s, pool := migratedStore(t)
	sc := newScan(t, s)
	batch := reported(prefix, n)
	for i := range batch {
		edit(i, &batch[i])
	}
	if _, err := s.Report(context.Background(), sc, batch, true); err != nil {
		t.Fatal(err)
	}
	return s, pool, sc
}

// TestTagRowsFollowFindings changes a finding's tags and approval behind
// the store's back: the tag rows, their counters and so the tag filter's
// pages and totals follow, in the changing statement.
func TestTagRowsFollowFindings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := migratedStore(t)
	sc := newScan(t, s)
	org := sc.OrgID
	var batch []Reported
	for i := range 6 {
		batch = append(batch, Reported{Fingerprint: fmt.Sprint(i), Title: fmt.Sprint("t", i), Category: "xss", Severity: "high",
			Tags: []string{"a", "b"}, Verified: true})
	}
	if _, err := s.Report(ctx, sc, batch, true); err != nil {
		t.Fatal(err)
	}
	tagged := func(tag string) (int, int64) {
		t.Helper()
		list, total, err := s.List(ctx, Filter{OrgID: org, Tag: tag, SortBy: "found_at", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(list), total
	}
	for _, step := range []struct {
		sql        string
		tag        string
		rows, want int
	}{
		{``, "a", 6, 6},
		// A tag removed, one added, one kept.
		{`UPDATE findings.findings SET tags = ARRAY['b', 'c'] WHERE fingerprint IN ('0', '1')`, "a", 4, 4},
		{``, "c", 2, 2},
		{``, "b", 6, 6},
		// Repeated tags count once.
		{`UPDATE findings.findings SET tags = ARRAY['c', 'c'] WHERE fingerprint = '2'`, "c", 3, 3},
		// No longer approved: gone from every tag.
		{`UPDATE findings.findings SET verification_status = 'rejected' WHERE fingerprint IN ('0', '3')`, "b", 3, 3},
		{``, "c", 2, 2},
	} {
		if step.sql != "" {
			if _, err := pool.Exec(ctx, step.sql); err != nil {
				t.Fatal(err)
			}
		}
		for _, fold := range []bool{false, true} {
			if fold {
				if _, err := s.FoldCounts(ctx, 1000); err != nil {
					t.Fatal(err)
				}
			}
			if n, total := tagged(step.tag); n != step.rows || total != int64(step.want) {
				t.Fatalf("after %q, tag %s: %d rows, total %d; want %d, %d", step.sql, step.tag, n, total, step.rows, step.want)
			}
		}
	}
}

// TestSearchKeysBackfilled records findings under the schema before the
// search keys, then applies the rest: the existing findings are found by q
// and file prefix with exact totals, and a later change of a title, a
// state or an approval behind the store's back is followed by the keys, the
// distinct texts and the counters.
func TestSearchKeysBackfilled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	if err := db.Migrate(ctx, pool, Schema, migrationsBefore(t, "0017")); err != nil {
		t.Fatal(err)
	}
	s := &Store{Pool: pool}
	sc := newScan(t, s)
	var batch []Reported
	for i := range 12 {
		batch = append(batch, Reported{Fingerprint: fmt.Sprint(i), Title: []string{"SQL injection", "Reflected XSS"}[i%2],
			Description: "Rule R" + fmt.Sprint(i%3), AffectedFile: fmt.Sprintf("src/m%d/f.go", i%4), Category: "injection",
			Severity: "high", Verified: true})
	}
	if _, err := s.Report(ctx, sc, batch, true); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	expect := func(f Filter, want int) {
		t.Helper()
		f.OrgID, f.SortBy, f.Limit = sc.OrgID, "found_at", 100
		for _, fold := range []bool{false, true} {
			if fold {
				if _, err := s.FoldCounts(ctx, 1000); err != nil {
					t.Fatal(err)
				}
			}
			list, total, err := s.List(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != want || total != int64(want) {
				t.Fatalf("%+v: %d rows, total %d; want %d", f, len(list), total, want)
			}
		}
	}
	expect(Filter{Text: "sql"}, 6)
	expect(Filter{Text: "r2"}, 4)
	expect(Filter{Text: "M1/"}, 3)
	expect(Filter{FilePrefix: "src/m1"}, 3)
	for _, step := range []string{
		`UPDATE findings.findings SET title = 'Blind SQL injection' WHERE fingerprint IN ('1', '3')`,
		`UPDATE findings.findings SET state = 'resolved' WHERE fingerprint = '0'`,
		`UPDATE findings.findings SET verification_status = 'rejected' WHERE fingerprint = '2'`,
	} {
		if _, err := pool.Exec(ctx, step); err != nil {
			t.Fatal(err)
		}
	}
	expect(Filter{Text: "sql"}, 7)
	expect(Filter{Text: "blind"}, 2)
	expect(Filter{Text: "xss"}, 4)
	expect(Filter{Text: "sql", State: "resolved"}, 1)
	expect(Filter{FilePrefix: "src/m", State: "open"}, 10)
}

// TestSearchComplements runs q over a column most of whose texts, and at
// least complementMin of them, match, which Resolve holds as the other
// texts' keys: pages and totals equal the findings whose title,
// description or file contain q, with the spec's filters, in a scan or
// not, in each order.
func TestSearchComplements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := migratedStore(t)
	sc := newScan(t, s)
	other := Scan{ID: uuid.NewString(), OrgID: sc.OrgID, RepoURL: "https://git.example.com/acme/other", ScanType: "full"}
	if _, err := s.RegisterScan(ctx, other); err != nil {
		t.Fatal(err)
	}
	batch := reported("c", 3*complementMin)
	for i := range batch {
		batch[i].Title = fmt.Sprintf("Rule %d", i%4)
		batch[i].Description = fmt.Sprintf("Sink %d", i)
		if i%7 == 0 {
			batch[i].Description = fmt.Sprintf("Source %d", i)
		}
	}
	if _, err := s.Report(ctx, sc, batch[:2*complementMin], true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Report(ctx, other, batch[2*complementMin:], true); err != nil {
		t.Fatal(err)
	}
	// A finding whose title matches while its description does not.
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET title = 'Sink rule' WHERE org_id = $1 AND description = 'Source 14'`, sc.OrgID); err != nil {
		t.Fatal(err)
	}
	contains := func(fd Finding) bool {
		for _, s := range []string{fd.Title, fd.Description, fd.AffectedFile} {
			if strings.Contains(strings.ToLower(s), "sink") {
				return true
			}
		}
		return false
	}
	for _, f := range []Filter{
		{SortBy: "found_at", Desc: true, Limit: 15, Offset: 15},
		{SortBy: "severity", Limit: 10, Offset: 3},
		{Severity: "high", SortBy: "found_at", Limit: 5, Offset: 5},
		{State: "open", Severity: "high", SortBy: "updated_at", Limit: 5},
		{ScanID: other.ID, SortBy: "found_at", Limit: 7, Offset: 2},
		{ScanID: sc.ID, Severity: "low", SortBy: "severity", Desc: true, Limit: 4},
	} {
		f.OrgID = sc.OrgID
		every := f
		every.Limit, every.Offset = 1000, 0
		all, _, err := s.List(ctx, every)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, fd := range all {
			if contains(fd) {
				want = append(want, fd.ID)
			}
		}
		total := int64(len(want))
		want = want[min(f.Offset, len(want)):min(f.Offset+f.Limit, len(want))]
		if len(want) == 0 {
			t.Fatalf("%+v: empty fixture", f)
		}
		f.Text = "SINK"
		r, err := s.Resolve(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := matchKeys(ctx, pool, f, true)
		if err != nil {
			t.Fatal(err)
		}
		if m.not != [3]bool{false, true, false} || len(m.description) != (len(batch)+6)/7 { // the "Source" texts
			t.Fatalf("%+v: descriptions not held as a complement: %v, %d keys", f, m.not, len(m.description))
		}
		got, n, err := s.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, fd := range got {
			ids = append(ids, fd.ID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(want) || n != total {
			t.Fatalf("%+v: got %v total %d, want %v total %d", f, ids, n, want, total)
		}
		if c, err := s.Count(ctx, f); err != nil || c != total {
			t.Fatalf("%+v: Count %d, %v; want %d", f, c, err, total)
		}
		// The pages and totals the complement gives, whichever way Resolve
		// chose.
		m.matched, m.walk = r.keys.matched, true
		r.keys = &m.searchKeys
		if page, n := runQueries(t, pool, r); fmt.Sprint(page) != fmt.Sprint(got) || n != total {
			t.Fatalf("%+v with a complement: %d rows total %d", f, len(page), n)
		}
	}
}

// TestComplementThreshold: a column's keys are held as the complement
// exactly when at least complementMin of its texts match and the texts
// that do not are fewer than those that do; the keys held are then every
// text that does not match, else every text that does.
func TestComplementThreshold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name            string
		matching, total int
		prefix          bool
		neg             bool
	}{
		{"too few matches", complementMin - 1, complementMin, false, false},
		{"one miss fewer than the matches", complementMin, 2*complementMin - 1, false, true},
		{"as many misses as matches", complementMin, 2 * complementMin, false, false},
		{"every text matches", complementMin + 36, complementMin + 36, false, true},
		{"prefix, one miss fewer", complementMin, 2*complementMin - 1, true, true},
		{"prefix, as many misses", complementMin, 2 * complementMin, true, false},
		{"prefix, every path", complementMin + 5, complementMin + 5, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, pool, sc := reportedScan(t, "k", tc.total, func(i int, r *Reported) {
				r.Verified, r.Description, r.AffectedFile = true, fmt.Sprintf("Source %d", i), fmt.Sprintf("lib/p%d.go", i)
				if i < tc.matching {
					r.Description, r.AffectedFile = fmt.Sprintf("Sink %d", i), fmt.Sprintf("src/p%d.go", i)
				}
			})
			f, col := Filter{OrgID: sc.OrgID, Text: "SINK"}, 1
			if tc.prefix {
				f, col = Filter{OrgID: sc.OrgID, FilePrefix: "src/"}, 2
			}
			m, err := matchKeys(ctx, pool, f, true)
			if err != nil {
				t.Fatal(err)
			}
			var want [3]bool
			want[col] = tc.neg
			keys := tc.matching
			if tc.neg {
				keys = tc.total - tc.matching
			}
			if m.not != want || len(m.sets()[col]) != keys || m.hits != int64(tc.matching) {
				t.Fatalf("not %v, %d keys, %d hits; want %v, %d keys, %d hits", m.not, len(m.sets()[col]), m.hits, want, keys, tc.matching)
			}
		})
	}
}

// TestSearchOrderIndexes: a page of one title's findings with a state, in
// found_at, severity and update order, reads the index holding each title's
// findings per state in that order (migrations 0025 and 0027) rather than
// the title's own, whose entries of the other states it would skip; a page
// of one title's findings within a repository (a quarter of the title's),
// in found_at and update order, reads the index holding each repository's
// findings per title in that order (migration 0042); a page
// of a repository's, a category's, a title's, a description's or a path's
// findings in update order reads the index holding them in that order
// (migrations 0026 and 0028) rather than sorting them all, and so does a
// page of one title's findings within a scan (migration 0031). The planner may
// not fall back to a scan of the table. The pages equal a plain sort.
func TestSearchOrderIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool, sc := reportedScan(t, "ts", 300, func(i int, r *Reported) {
		r.Verified, r.Title = true, []string{"Path traversal in upload", "Weak hash"}[i%2]
		r.Category = []string{"injection", "xss", "crypto"}[i%3]
		r.Description = fmt.Sprintf("Sink %d", i%4)
	})
	// Three quarters of the organization's findings in another repository,
	// so that one repository is a small share of the list.
	other := Scan{ID: uuid.NewString(), OrgID: sc.OrgID, RepoURL: "https://git.example.com/acme/other", ScanType: "full"}
	if _, err := s.RegisterScan(ctx, other); err != nil {
		t.Fatal(err)
	}
	more := reported("to", 900)
	for i := range more {
		more[i].Verified, more[i].Title, more[i].Category = true, []string{"Path traversal in upload", "Weak hash"}[i%2], "crypto"
	}
	if _, err := s.Report(ctx, other, more, true); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE findings.findings f SET state = (ARRAY['open','true_positive','false_positive','accepted_risk','resolved'])[1 + x.n % 5],
			updated_at = updated_at + (x.n * 7919 % 300) * interval '1 second'
		FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM findings.findings WHERE org_id = $1) x WHERE f.id = x.id`, sc.OrgID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE findings.findings`); err != nil {
		t.Fatal(err)
	}
	repo := vocab.RepoKey(sc.RepoURL)
	for _, tc := range []struct {
		f     Filter
		where string // the filter in SQL
		index string
	}{
		{Filter{Text: "TRAVERSAL", State: "open", SortBy: "found_at"}, `state = 'open' AND title ILIKE '%traversal%'`, "findings_search_title_state"},
		{Filter{Text: "TRAVERSAL", State: "open", SortBy: "severity"}, `state = 'open' AND title ILIKE '%traversal%'`, "findings_search_title_state_rank"},
		{Filter{Text: "TRAVERSAL", State: "open", SortBy: "updated_at"}, `state = 'open' AND title ILIKE '%traversal%'`, "findings_search_title_state_updated"},
		{Filter{Text: "TRAVERSAL", SortBy: "updated_at"}, `title ILIKE '%traversal%'`, "findings_search_title_updated"},
		{Filter{Text: "TRAVERSAL", RepoKey: repo, SortBy: "found_at"}, `repo_key = '` + repo + `' AND title ILIKE '%traversal%'`, "findings_search_repo_title"},
		{Filter{Text: "TRAVERSAL", RepoKey: repo, SortBy: "updated_at"}, `repo_key = '` + repo + `' AND title ILIKE '%traversal%'`, "findings_search_repo_title_updated"},
		{Filter{RepoKey: repo, SortBy: "updated_at"}, `repo_key = '` + repo + `'`, "findings_search_repo_updated"},
		{Filter{Category: "xss", SortBy: "updated_at"}, `category = 'xss'`, "findings_search_category_updated"},
		{Filter{Text: "sink 1", SortBy: "updated_at"}, `description ILIKE '%sink 1%'`, "findings_search_description_updated"},
		{Filter{FilePrefix: "src/f1", SortBy: "updated_at"}, `starts_with(affected_file, 'src/f1')`, "findings_search_file_updated"},
		{Filter{ScanID: sc.ID, Text: "TRAVERSAL", SortBy: "updated_at"},
			`title ILIKE '%traversal%' AND EXISTS (SELECT 1 FROM findings.occurrences o WHERE o.scan_id = '` + sc.ID + `' AND o.finding_id = f.id)`,
			"occurrences_search_title_updated"},
	} {
		f := tc.f
		f.OrgID, f.Desc, f.Limit, f.Offset = sc.OrgID, true, 5, 5
		var want []string
		if err := pool.QueryRow(ctx, `SELECT array_agg(id::text ORDER BY `+f.orderBy("f")+`) FROM findings.findings f
			WHERE org_id = $1 AND `+tc.where, sc.OrgID).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if ids, total := listIDs(t, s, f); len(want) < 10 || !slices.Equal(ids, want[5:10]) || total != int64(len(want)) {
			t.Fatalf("%s: %v total %d, want %v", tc.index, ids, total, want)
		}
		r, err := s.Resolve(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		r, _, _, err = r.windowBand(ctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		page, args, _, _ := r.Queries()
		var plan []string
		err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off`); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, `EXPLAIN `+page, args...)
			if err != nil {
				return err
			}
			plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if text := strings.Join(plan, "\n"); !strings.Contains(text, "using "+tc.index+" on") {
			t.Errorf("the page of %s does not read %s:\n%s", tc.where, tc.index, text)
		}
	}
}

// TestUpdateOrderKeys: a search whose paths each hold many findings reads
// the paths' indexes for a first page in update order as in found_at order,
// each path yielding its findings up to the page's end in that order
// (migration 0028), rather than walking the organization's list; the pages
// equal a plain sort either way.
func TestUpdateOrderKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool, sc := reportedScan(t, "uw", 5000, func(i int, r *Reported) {
		r.Verified, r.AffectedFile = true, fmt.Sprintf("lib/f%d.go", i)
		if i%5 == 0 {
			r.AffectedFile = fmt.Sprintf("src/f%d.go", i%10) // 10 paths, 100 findings each
		}
	})
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET updated_at = updated_at + (hashtext(id::text) % 1000) * interval '1 second'
		WHERE org_id = $1`, sc.OrgID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sortBy string
		offset int
	}{
		{"updated_at", 0},
		{"found_at", 0},
		{"updated_at", 500},
	} {
		f := Filter{OrgID: sc.OrgID, FilePrefix: "src/", SortBy: tc.sortBy, Desc: true, Limit: 5, Offset: tc.offset}
		r, err := s.Resolve(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if r.keys.walk {
			t.Errorf("%s from %d: walks the list, want the paths' indexes", tc.sortBy, tc.offset)
		}
		var want []string
		if err := pool.QueryRow(ctx, `SELECT array_agg(id::text ORDER BY `+f.orderBy("f")+`) FROM findings.findings f
			WHERE org_id = $1 AND starts_with(affected_file, 'src/')`, sc.OrgID).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if ids, total := listIDs(t, s, f); !slices.Equal(ids, want[tc.offset:tc.offset+5]) || total != 1000 {
			t.Errorf("%s from %d: %v total %d, want %v total 1000", tc.sortBy, tc.offset, ids, total, want[tc.offset:tc.offset+5])
		}
	}
}

// TestSearchSeverityWindow pages a q search sorted by severity, each page
// found among the severities it spans (see rankWindow), and sorted by
// found_at, at every offset around the severities' bounds, and gets what
// the same list without q gives (every finding matches q). Pages past the
// middle are read from the other end (see reversed).
func TestSearchSeverityWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool, sc := reportedScan(t, "w", 60, func(i int, r *Reported) {
		r.Description = fmt.Sprintf("Sink %d", i%9)
		r.Severity = Severities[(i*i)%len(Severities)] // uneven severities
	})
	windowed, single, reversed := false, false, false
	for _, sortBy := range []string{"severity", "found_at"} {
		for _, state := range []string{"", "open"} {
			for _, desc := range []bool{true, false} {
				for offset := 0; offset < 60; offset += 3 {
					f := Filter{OrgID: sc.OrgID, State: state, SortBy: sortBy, Desc: desc, Limit: 7, Offset: offset}
					want, wantTotal, err := s.List(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					f.Text = "sink"
					got, total, err := s.List(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					if fmt.Sprint(got) != fmt.Sprint(want) || total != wantTotal {
						t.Fatalf("%+v: got %d rows total %d, want %d rows total %d", f, len(got), total, len(want), wantTotal)
					}
					r, err := s.Resolve(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					// Through the keys' indexes, whichever way Resolve chose.
					r.keys.walk = false
					w := r.rankWindow()
					if w.rankHi != 0 && (w.rankLo > 1 || w.rankHi < len(Severities)) {
						windowed = true
						single = single || w.rankLo == w.rankHi
					}
					if w.reversed().Desc != w.Desc {
						reversed = true
					}
					if page, n := runQueries(t, pool, r); fmt.Sprint(page) != fmt.Sprint(want) || n != wantTotal {
						t.Fatalf("%+v through the keys: got %d rows total %d, want %d rows total %d", f, len(page), n, len(want), wantTotal)
					}
				}
			}
		}
	}
	if !windowed || !single {
		t.Fatalf("pages found within fewer than every severity: %t, within one: %t", windowed, single)
	}
	if !reversed {
		t.Fatal("no page was read from the other end")
	}
}

// sinkIDs returns the ids of the organization's findings whose
// description starts with "Sink " (with f's state, when it has one), in
// f's order.
func sinkIDs(t *testing.T, pool *pgxpool.Pool, f Filter) []string {
	t.Helper()
	var ids []string
	if err := pool.QueryRow(context.Background(), `SELECT coalesce(array_agg(f.id::text ORDER BY `+f.orderBy("f")+`), '{}') FROM findings.findings f
		WHERE f.org_id = $1 AND f.description LIKE 'Sink %' AND ($2 = '' OR f.state = $2)`, f.OrgID, f.State).Scan(&ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

// checkSearchPage checks List's page of f and its total against want,
// the ids of every match in f's order, and returns f resolved (see
// Resolve) with its page read through the keys' indexes, whichever way
// Resolve chose, after checking that page and total the same way.
// deep, when not nil, is handed the page's statement when it is a deep
// page of one column's keys (see keyDeepPage).
func checkSearchPage(t *testing.T, s *Store, f Filter, want []string, deep func(page string, args []any)) Filter {
	t.Helper()
	ctx := context.Background()
	wantPage := want[min(f.Offset, len(want)):min(f.Offset+f.Limit, len(want))]
	got, total, err := s.List(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if ids := findingIDs(got); fmt.Sprint(ids) != fmt.Sprint(wantPage) || total != int64(len(want)) {
		t.Fatalf("%+v: got %v total %d, want %v total %d", f, ids, total, wantPage, len(want))
	}
	r, err := s.Resolve(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if r.keys == nil {
		return r
	}
	walk := r.keys.walk
	r.keys.walk = false
	page, args, _, _ := r.Queries()
	if deep != nil && strings.HasPrefix(page, "WITH y AS MATERIALIZED") {
		deep(page, args)
	}
	if got, n := runQueries(t, s.Pool, r); fmt.Sprint(findingIDs(got)) != fmt.Sprint(wantPage) || n != int64(len(want)) {
		t.Fatalf("%+v through the keys: got %v total %d, want %v total %d", f, findingIDs(got), n, wantPage, len(want))
	}
	r.keys.walk = walk
	return r
}

// TestSeverityPageReadsItsSeveritiesKeys: a search sorted by severity,
// whose page past the first lies within some of the severities (see
// rankWindow), reads only the keys with findings of those severities with
// the filter's state. Here most keys, as a rule's texts, come with one
// severity (40 keys of 20 findings, eight a severity) and four with every
// one (100 findings each). Pages and totals equal a plain query's through every
// page, by either sort direction, with and without a state; and deep pages
// within one severity are found near their keys' bound, which reading
// every key's index never allows (a key's share of the page, taken over
// every key, is too small for the band's twelve keys to hold it).
func TestSeverityPageReadsItsSeveritiesKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool, sc := reportedScan(t, "v", 1300, func(i int, r *Reported) {
		r.Verified = true
		switch {
		case i < 800:
			r.Description = fmt.Sprintf("Sink %d", i%40)
			r.Severity = Severities[i%40%len(Severities)]
		case i < 1200:
			r.Description = fmt.Sprintf("Sink %d", 40+(i-800)%4)
			r.Severity = Severities[(i-800)/4%len(Severities)]
		default:
			r.Description = fmt.Sprintf("Source %d", i%10) // matches no q below
		}
	})
	// Each key's findings of a severity an hour apart (so that a page's
	// share of each key lies at about the same place), a third resolved.
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET
			found_at = timestamptz '2026-03-01' + i.k * interval '1 second'
				+ (CASE WHEN i.n < 800 THEN i.n / 40 ELSE (i.n - 800) / 20 END) * interval '1 hour',
			state = CASE WHEN i.n % 3 = 0 THEN 'resolved' ELSE state END
		FROM (SELECT id, substr(fingerprint, 2)::int AS n, substr(fingerprint, 2)::int % 40 AS k FROM findings.findings) i
		WHERE i.id = findings.id AND org_id = $1`, sc.OrgID); err != nil {
		t.Fatal(err)
	}
	narrowed, near := false, map[bool]bool{}
	for _, state := range []string{"", "open"} {
		for _, desc := range []bool{true, false} {
			f := Filter{OrgID: sc.OrgID, State: state, SortBy: "severity", Desc: desc, Limit: 6, Text: "sink"}
			want := sinkIDs(t, pool, f)
			for f.Offset = 0; f.Offset < len(want)+6; f.Offset += 5 {
				r := checkSearchPage(t, s, f, want, func(page string, args []any) {
					near[deepPageNearBound(t, pool, page, args)] = true
				})
				r.keys.walk = false
				w := r.rankWindow()
				if w.rankHi != 0 && f.Offset > 0 { // a first page reads no key's severities
					var inBand int
					if err := pool.QueryRow(ctx, `SELECT count(DISTINCT f.description_key) FROM findings.findings f
						WHERE f.org_id = $1 AND f.description LIKE 'Sink %' AND ($2 = '' OR f.state = $2) AND f.severity_rank BETWEEN $3 AND $4`,
						sc.OrgID, state, w.rankLo, w.rankHi).Scan(&inBand); err != nil {
						t.Fatal(err)
					}
					if len(w.keys.description) != inBand {
						t.Fatalf("%+v: the page within ranks %d to %d reads %d keys, %d hold findings there", f, w.rankLo, w.rankHi, len(w.keys.description), inBand)
					}
					narrowed = narrowed || inBand < len(r.keys.description)
				}
			}
		}
	}
	if !narrowed || !near[true] {
		t.Fatalf("pages read fewer keys than match: %t; deep pages found near the bound / in order: %v", narrowed, near)
	}
}

// TestSeverityWindowAfterComplement: when most of a column's texts
// match, Resolve first holds the few that do not (a complement), then,
// for a page read through the keys' indexes (deep enough that walking the
// list would cost more), reads the matching keys themselves; the matches'
// counts per severity carry over, so that a page sorted by severity is
// still found within the severities it spans (see rankWindow), and pages
// equal a plain query's.
func TestSeverityWindowAfterComplement(t *testing.T) {
	t.Parallel()
	s, pool, sc := reportedScan(t, "c", 600, func(i int, r *Reported) {
		r.Verified = true
		r.Description = fmt.Sprintf("Sink %d", i%100) // 100 of the 120 descriptions
		r.Severity = Severities[i%100%len(Severities)]
		if i >= 500 {
			r.Description = fmt.Sprintf("Source %d", i%20)
		}
	})
	windowed := false
	f := Filter{OrgID: sc.OrgID, Text: "sink", SortBy: "severity", Desc: true, Limit: 7}
	want := sinkIDs(t, pool, f)
	for f.Offset = 0; f.Offset < len(want); f.Offset += 31 {
		r := checkSearchPage(t, s, f, want, nil)
		if !r.keys.walk { // the page read through the keys' indexes
			if r.keys.not != [3]bool{} || len(r.keys.description) != 100 {
				t.Fatalf("keys: %d descriptions, complements %v", len(r.keys.description), r.keys.not)
			}
			if w := r.rankWindow(); w.rankHi != 0 {
				windowed = true
			}
		}
	}
	if !windowed {
		t.Fatal("no page found within the severities it spans")
	}
}

// TestKeySharesFollowKeySizes: a search's keys of very different sizes
// (one description of 1,000 findings, twenty of 10, each spread over the
// same hours) share a page's end by their sizes (see keyShares), so that
// each key's share ends at about the same place: deep pages are found
// near their keys' bound (unless the large key alone holds the page's end
// up to it, which is then read in order), which equal shares never allow
// here (the small keys hold fewer findings than an equal share, so the
// bound's shares fall short of the page's end). Pages and totals equal a
// plain query's in every order and direction, through every page.
func TestKeySharesFollowKeySizes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool, sc := reportedScan(t, "z", 1300, func(i int, r *Reported) {
		r.Verified, r.Severity = true, "high"
		switch {
		case i < 1000:
			r.Description = "Sink 0"
		case i < 1200:
			r.Description = fmt.Sprintf("Sink %d", 1+(i-1000)%20)
		default:
			r.Description = fmt.Sprintf("Source %d", i) // matches no q below
		}
	})
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET
			found_at = timestamptz '2026-03-01' + CASE WHEN i.n < 1000 THEN i.n ELSE (i.n - 1000) / 20 * 100 + (i.n - 1000) % 20 * 5 END * interval '1 minute',
			updated_at = timestamptz '2026-04-01' + CASE WHEN i.n < 1000 THEN i.n ELSE (i.n - 1000) / 20 * 100 + (i.n - 1000) % 20 * 5 END * interval '1 second'
		FROM (SELECT id, substr(fingerprint, 2)::int AS n FROM findings.findings) i
		WHERE i.id = findings.id AND org_id = $1`, sc.OrgID); err != nil {
		t.Fatal(err)
	}
	near := map[bool]bool{}
	for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
		for _, desc := range []bool{true, false} {
			f := Filter{OrgID: sc.OrgID, SortBy: sortBy, Desc: desc, Limit: 6, Text: "sink"}
			want := sinkIDs(t, pool, f)
			for f.Offset = 0; f.Offset < len(want)+6; f.Offset += 23 {
				n := f.Offset + f.Limit
				checkSearchPage(t, s, f, want, func(page string, args []any) {
					if ok := deepPageNearBound(t, pool, page, args); sortBy == "found_at" && desc && n >= 240 && n <= 600 {
						near[ok] = true
					}
				})
			}
		}
	}
	if !near[true] {
		t.Fatalf("deep pages of 240 to 600 findings' end found near the bound / in order: %v", near)
	}
}

// TestScanSearch runs q and file prefix searches within a scan, which read
// the occurrences' copies of the key columns, both ways a page can be
// found (the occurrences' key indexes, or a walk of the scan), with the
// spec's and the other search filters, under every sort, through every
// page: pages and totals equal the scan's findings whose texts match, as
// the unfiltered scan list and the texts themselves say. A title and a
// file changed behind the store's back are followed, and a scan of
// another organization with the same texts gives nothing.
func TestScanSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := migratedStore(t)
	first := newScan(t, s)
	org := first.OrgID
	again := Scan{ID: uuid.NewString(), OrgID: org, RepoURL: first.RepoURL, ScanType: "full"}
	foreign := Scan{ID: uuid.NewString(), OrgID: uuid.NewString(), RepoURL: first.RepoURL, ScanType: "full"}
	for _, sc := range []Scan{again, foreign} {
		if _, err := s.RegisterScan(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	batch := func(from, to int) []Reported {
		var out []Reported
		for i := from; i < to; i++ {
			out = append(out, Reported{Fingerprint: fmt.Sprint("f", i), Title: fmt.Sprintf("Rule %d finding", i%4),
				Description: fmt.Sprintf("Sink %d reached", i%5), AffectedFile: fmt.Sprintf("src/m%d/f%d.go", i%3, i%7),
				Category: Categories[i%3], Severity: Severities[(i*i+i/4)%len(Severities)], Verified: i%11 != 10,
				Tags: []string{fmt.Sprint("cwe-", i%2)}}) // whose rows copy the category too
		}
		return out
	}
	// The second scan sees half of the first's findings again, and more.
	for _, r := range []struct {
		sc       Scan
		from, to int
	}{{first, 0, 60}, {again, 30, 90}, {foreign, 0, 90}} {
		if _, err := s.Report(ctx, r.sc, batch(r.from, r.to), true); err != nil {
			t.Fatal(err)
		}
	}
	// Spread found_at and triage some, so that orders and states bite.
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET found_at = timestamptz '2026-03-01' + (substr(fingerprint, 2)::int % 17) * interval '1 hour',
		state = CASE WHEN substr(fingerprint, 2)::int % 4 = 0 THEN 'resolved' ELSE state END WHERE org_id = $1`, org); err != nil {
		t.Fatal(err)
	}
	// Texts changed behind the store's back: a title, and a file moved out
	// of its prefix.
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET title = 'Renamed check' WHERE org_id = $1 AND fingerprint IN ('f41', 'f45')`, org); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET affected_file = 'lib/moved.go' WHERE org_id = $1 AND fingerprint = 'f42'`, org); err != nil {
		t.Fatal(err)
	}
	// And a category changed the same way.
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET category = 'crypto' WHERE org_id = $1 AND fingerprint IN ('f43', 'f44')`, org); err != nil {
		t.Fatal(err)
	}
	if n := outOfSync(t, pool); n != 0 {
		t.Fatalf("%d occurrences, tag rows, tag counters, key search counters or text counters out of step with their findings", n)
	}
	if _, err := s.FoldCounts(ctx, 3); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 5, 0, 0, 0, time.UTC)
	matches := func(f Filter, fd Finding) bool {
		lower := strings.ToLower
		switch {
		case f.Severity != "" && fd.Severity != f.Severity,
			f.State != "" && fd.State != f.State,
			!f.FoundSince.IsZero() && fd.FoundAt.Before(f.FoundSince),
			f.Category != "" && fd.Category != f.Category,
			f.RepoKey != "" && f.RepoKey != first.repoKey(), // every finding of these scans is first's repository's
			f.FilePrefix != "" && !strings.HasPrefix(fd.AffectedFile, f.FilePrefix),
			f.Text != "" && !slices.ContainsFunc([]string{fd.Title, fd.Description, fd.AffectedFile}, func(field string) bool {
				return strings.Contains(lower(field), lower(f.Text))
			}):
			return false
		}
		return true
	}
	cases := []struct {
		f   Filter
		min int
	}{
		{Filter{Text: "rule 1"}, 10},
		{Filter{Text: "renamed"}, 2},
		{Filter{Text: "SINK"}, 40},
		{Filter{Text: "f3.go"}, 5},
		{Filter{Text: "m1/"}, 10},
		{Filter{Text: "1"}, 20}, // titles, descriptions and files
		{Filter{Text: "no such text"}, 0},
		{Filter{FilePrefix: "src/m2/"}, 10},
		{Filter{FilePrefix: "src/m0/f1"}, 2},
		{Filter{FilePrefix: "lib/"}, 1},
		{Filter{FilePrefix: "src/", Text: "rule 2"}, 5},
		{Filter{Text: "rule", Severity: "high"}, 3},
		{Filter{Text: "sink 2", State: "resolved"}, 1},
		{Filter{FilePrefix: "src/m1/", Severity: "low", State: "open"}, 1},
		{Filter{Text: "rule 3", Category: Categories[1]}, 2},
		{Filter{FilePrefix: "src/", FoundSince: at}, 10},
		{Filter{Category: Categories[2]}, 10},
		{Filter{Category: "crypto"}, 1}, // changed behind the store's back
		{Filter{Category: Categories[0], Severity: "high"}, 1},
		{Filter{RepoKey: first.repoKey()}, 40},
		{Filter{RepoKey: first.repoKey(), Category: Categories[1], Text: "sink"}, 5},
		{Filter{RepoKey: "https://git.example.com/acme/other"}, 0},
	}
	for _, sc := range []Scan{first, again} {
		for _, tc := range cases {
			for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
				for _, desc := range []bool{false, true} {
					f := tc.f
					f.OrgID, f.ScanID, f.SortBy, f.Desc = org, sc.ID, sortBy, desc
					label := fmt.Sprintf("scan %s %+v", sc.ID[:8], tc.f)
					ordered, _, err := s.List(ctx, Filter{OrgID: org, ScanID: sc.ID, SortBy: sortBy, Desc: desc, Limit: 1000})
					if err != nil {
						t.Fatal(err)
					}
					var want []string
					for _, fd := range ordered {
						if matches(f, fd) {
							want = append(want, fd.ID)
						}
					}
					if len(want) < tc.min || (tc.min == 0 && len(want) != 0) {
						t.Fatalf("%s: fixture gives %d matches, want at least %d", label, len(want), tc.min)
					}
					checkPages(t, s, f, want, []int{4, 100}, label)
					// Both ways of finding a page, whichever Resolve chose.
					for _, page := range [][2]int{{5, 0}, {5, 5}, {3, len(want) - 2}} {
						f.Limit, f.Offset = page[0], max(page[1], 0)
						r, err := s.Resolve(ctx, f)
						if err != nil {
							t.Fatal(err)
						}
						exp := want[min(f.Offset, len(want)):min(f.Offset+f.Limit, len(want))]
						for _, walk := range []bool{false, true} {
							if r.keys == nil && walk {
								break // no keys: one way only
							}
							if r.keys != nil && r.keys.hits != 0 && r.keys.not != [3]bool{} && !walk {
								continue // the keys' indexes need the matching keys themselves
							}
							if r.keys != nil {
								r.keys.walk = walk
							}
							got, n := runQueries(t, pool, r)
							var ids []string
							for _, fd := range got {
								ids = append(ids, fd.ID)
							}
							if fmt.Sprint(ids) != fmt.Sprint(exp) || n != int64(len(want)) {
								t.Fatalf("%s sort=%s desc=%t walk=%t limit=%d offset=%d:\n got %v total %d\nwant %v total %d",
									label, sortBy, desc, walk, f.Limit, f.Offset, ids, n, exp, len(want))
							}
						}
					}
				}
			}
		}
	}
	// Another organization's scan, with the same texts, gives nothing.
	for _, f := range []Filter{{Text: "rule"}, {FilePrefix: "src/"}} {
		f.OrgID, f.ScanID, f.SortBy, f.Limit = org, foreign.ID, "found_at", 15
		list, total, err := s.List(ctx, f)
		if err != nil || len(list) != 0 || total != 0 {
			t.Fatalf("foreign scan %+v: %d findings, total %d, %v", f, len(list), total, err)
		}
	}
}

// TestSearchKeyBound pages q searches matching many findings through
// several keys, where each key's findings are cut at a bound read from the
// keys themselves (see keyBound), at every offset, in found_at and severity
// order both ways: through keys of even sizes, where the bound cuts, and of
// very uneven ones, where it must not; through one column's keys, whose
// deep pages are found near the bound or, where it does not hold, in order
// (see keyDeepPage), and through two columns' (see unionPage). Every
// finding matches q, so each page is the unfiltered list's.
func TestSearchKeyBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool, sc := reportedScan(t, "b", 90, func(i int, r *Reported) {
		r.Description = fmt.Sprintf("Sink %d", i%6)     // six keys of 15
		r.Title = "Rule in " + fmt.Sprint(min(i%40, 4)) // four keys of 3 and one of 78
		r.Severity = Severities[(i*i+i/7)%len(Severities)]
	})
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET found_at = timestamptz '2026-03-01' + (md5(fingerprint)::uuid::text < '8')::int * interval '1 hour'
		+ (substr(fingerprint, 2)::int % 13) * interval '1 minute',
		updated_at = timestamptz '2026-04-01' + (substr(fingerprint, 2)::int * 7 % 17) * interval '1 minute' WHERE org_id = $1`, sc.OrgID); err != nil {
		t.Fatal(err)
	}
	bounded := map[string]bool{}
	deep := map[bool]bool{} // deep pages cut from the rows up to their end's other end (true), or sorted (false)
	near := map[bool]bool{} // deep pages of one column's keys found near the bound (true), or in order (false)
	for _, text := range []string{"sink", "rule", "in"} {
		for _, sortBy := range []string{"found_at", "severity", "updated_at"} {
			for _, desc := range []bool{true, false} {
				for offset := 0; offset < 95; offset += 4 {
					f := Filter{OrgID: sc.OrgID, SortBy: sortBy, Desc: desc, Limit: 6, Offset: offset}
					want, wantTotal, err := s.List(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					f.Text = text
					r, err := s.Resolve(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					r.keys.walk = false
					page, args, _, _ := r.Queries()
					if strings.Contains(page, "OVER ()") {
						bounded[text+" "+sortBy] = true
					}
					if strings.HasPrefix(page, "WITH m AS MATERIALIZED") {
						deep[deepPageFromEnd(t, pool, page, args)] = true
					}
					if strings.HasPrefix(page, "WITH y AS MATERIALIZED") {
						near[deepPageNearBound(t, pool, page, args)] = true
					}
					if page, n := runQueries(t, pool, r); fmt.Sprint(page) != fmt.Sprint(want) || n != wantTotal {
						t.Fatalf("%+v: got %d rows total %d, want %d rows total %d", f, len(page), n, len(want), wantTotal)
					}
					got, total, err := s.List(ctx, f)
					if err != nil || fmt.Sprint(got) != fmt.Sprint(want) || total != wantTotal {
						t.Fatalf("%+v: List gives %d rows total %d (%v), want %d rows total %d", f, len(got), total, err, len(want), wantTotal)
					}
				}
			}
		}
	}
	for _, text := range []string{"sink", "rule"} {
		for _, sortBy := range []string{"found_at", "severity", "updated_at"} {
			if !bounded[text+" "+sortBy] {
				t.Errorf("no page of %s by %s read under a bound: %v", text, sortBy, bounded)
			}
		}
	}
	if !deep[true] || !deep[false] {
		t.Errorf("deep pages taken from the other end / sorted: %v", deep)
	}
	if !near[true] || !near[false] {
		t.Errorf("deep pages of one column's keys found near the bound / in order: %v", near)
	}
}

// deepPageNearBound reports which way a deep page of one column's keys
// (see keyDeepPage) was read, from the plan the database executed: back
// from the bound (true), the first of the page's two forms, or in order
// (false), the second.
func deepPageNearBound(t *testing.T, pool *pgxpool.Pool, page string, args []any) bool {
	t.Helper()
	var plans []map[string]any
	if err := pool.QueryRow(context.Background(), "EXPLAIN (ANALYZE, FORMAT JSON) "+page, args...).Scan(&plans); err != nil {
		t.Fatal(err)
	}
	// The page's two forms are the Append (or Merge Append) whose two
	// members are Limits, each under its subquery and, in a Merge Append,
	// a Sort (the bound's are a Limit and a Result); a form ran when its
	// keys were unnested.
	ran := map[int]bool{}
	forms := 0
	dbtest.EachNode(plans[0]["Plan"].(map[string]any), func(node map[string]any) {
		members, _ := node["Plans"].([]any)
		if (node["Node Type"] != "Append" && node["Node Type"] != "Merge Append") || len(members) != 2 {
			return
		}
		for _, m := range members {
			m := m.(map[string]any)
			for m["Node Type"] == "Sort" || m["Node Type"] == "Subquery Scan" {
				sub, _ := m["Plans"].([]any)
				if len(sub) == 0 {
					break
				}
				m = sub[0].(map[string]any)
			}
			if m["Node Type"] != "Limit" {
				return
			}
		}
		forms++
		for i, m := range members {
			dbtest.EachNode(m.(map[string]any), func(n map[string]any) {
				if loops, _ := n["Actual Loops"].(float64); n["Function Name"] == "unnest" && loops > 0 {
					ran[i] = true
				}
			})
		}
	})
	if forms != 1 || ran[0] == ran[1] {
		t.Fatalf("a deep page's forms: %d appends, ran %v", forms, ran)
	}
	return ran[0]
}

// TestUnionPageForms: only a deeper page of a union cut at a bound takes
// the form that counts the union's rows to choose its end (see unionPage);
// a first page, or a union without a bound, is sorted as it is, without
// holding its rows.
func TestUnionPageForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		offset  int
		bounded bool
		deep    bool
	}{
		{0, false, false},
		{0, true, false},
		{100, false, false},
		{100, true, true},
	} {
		// Planned once (see plannedOnce), its LIMIT is written in and its
		// OFFSET is the one parameter after the union's.
		f := Filter{SortBy: "found_at", Limit: 10, Offset: tc.offset}
		page, args := f.unionPage(f, "SELECT 1", []any{"a"}, tc.bounded)
		if got := strings.HasPrefix(page, "WITH m AS MATERIALIZED"); got != tc.deep || len(args) != 2 || args[1] != tc.offset {
			t.Errorf("offset %d, bounded %t: counted form %t with arguments %v, want %t with [a %d]", tc.offset, tc.bounded, got, args, tc.deep, tc.offset)
		}
	}
}

// deepPageFromEnd reports which way a deep page of a union of keys (see
// unionPage) is cut, from the plan the database executed: from the other
// end of the rows up to the page's end (true), when the union holds fewer
// than twice those rows, or by sorting them (false).
func deepPageFromEnd(t *testing.T, pool *pgxpool.Pool, page string, args []any) bool {
	t.Helper()
	// The union's rows, counted under CTE c, against the one-time
	// filters' threshold, twice the rows up to the page's end.
	text := planText(t, pool, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ", page, args)
	counted := regexp.MustCompile(`CTE c\n(?:.*\n)*?.*CTE Scan on m .*actual rows=(\d+)`).FindStringSubmatch(text)
	threshold := regexp.MustCompile(`One-Time Filter: \(\$\d+ < '(\d+)'::bigint\)`).FindStringSubmatch(text)
	if counted == nil || threshold == nil {
		t.Fatalf("no count or threshold in a deep page's plan:\n%s", text)
	}
	n, _ := strconv.Atoi(counted[1])
	limit, _ := strconv.Atoi(threshold[1])
	return n < limit
}

// TestKeyCond renders a resolved search's condition on the key columns:
// columns without keys are left out (they match nothing), a column holding
// the complement of no key drops the condition (every row matches through
// it), no keys at all match nothing, and one column's condition stands
// alone so that its index can serve it. Many keys that only test rows are
// looked up in a hash (see hashedKeysMin).
func TestKeyCond(t *testing.T) {
	t.Parallel()
	a, b := []string{uuid.NewString()}, []string{uuid.NewString(), uuid.NewString()}
	many := make([]string, hashedKeysMin)
	for i := range many {
		many[i] = uuid.NewString()
	}
	for _, tc := range []struct {
		name   string
		keys   searchKeys
		cols   []int
		filter bool
		want   string // "" for no condition
		nargs  int
	}{
		{"many keys tested", searchKeys{title: a, file: many}, []int{0, 1, 2}, true,
			"(o.title_key = ANY($1::uuid[]) OR (o.file_key IN (SELECT unnest($2::uuid[]))) IS TRUE)", 2},
		{"many keys driving", searchKeys{file: many}, []int{2}, false, "o.file_key = ANY($1::uuid[])", 1},
		{"a complement of many keys tested", searchKeys{title: a, description: many, not: [3]bool{false, true, false}}, []int{0, 1, 2}, true,
			"(o.title_key = ANY($1::uuid[]) OR (o.description_key IN (SELECT unnest($2::uuid[]))) IS FALSE)", 2},
		{"a complement of many keys", searchKeys{description: many, not: [3]bool{false, true, false}}, []int{0, 1, 2}, false,
			"NOT (o.description_key = ANY($1::uuid[]))", 1},
		{"one column", searchKeys{title: a}, []int{0, 1, 2}, false, "o.title_key = ANY($1::uuid[])", 1},
		{"two columns", searchKeys{title: a, file: b}, []int{0, 1, 2}, false, "(o.title_key = ANY($1::uuid[]) OR o.file_key = ANY($2::uuid[]))", 2},
		{"a complement with keys", searchKeys{title: a, description: b, not: [3]bool{false, true, false}}, []int{0, 1, 2}, false,
			"(o.title_key = ANY($1::uuid[]) OR NOT (o.description_key = ANY($2::uuid[])))", 2},
		{"every text of a column", searchKeys{title: a, not: [3]bool{false, true, false}}, []int{0, 1, 2}, false, "", 0},
		{"no keys", searchKeys{}, []int{0, 1, 2}, false, "false", 0},
		{"a prefix's paths", searchKeys{file: b}, []int{2}, false, "o.file_key = ANY($1::uuid[])", 1},
		{"every path", searchKeys{not: [3]bool{false, false, true}}, []int{2}, false, "", 0},
		{"no path", searchKeys{}, []int{2}, false, "false", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conds, args := tc.keys.cond("o", tc.cols, tc.filter, nil, nil)
			got := strings.Join(conds, " AND ")
			if got != tc.want || len(args) != tc.nargs {
				t.Fatalf("%q with %d arguments, want %q with %d", got, len(args), tc.want, tc.nargs)
			}
		})
	}
}

// TestSearchEveryDescription: q that every description contains matches
// every finding, whatever else it matches (here some titles too), with or
// without a scan, in every order: the descriptions' column holds the
// complement of no key, the search resolves to the filter without q, and
// its pages and totals are the list's.
func TestSearchEveryDescription(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := migratedStore(t)
	sc := newScan(t, s)
	batch := reported("e", 2*complementMin)
	for i := range batch {
		batch[i].Verified = true
		batch[i].Description = fmt.Sprintf("Tainted data reaches sink %d", i)
		if i%3 == 0 {
			batch[i].Title = fmt.Sprintf("Sink rule %d", i%5)
		}
	}
	if _, err := s.Report(ctx, sc, batch, true); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Filter{
		{SortBy: "found_at", Desc: true, Limit: 15, Offset: 15},
		{SortBy: "updated_at", Limit: 10, Offset: 3},
		{Severity: "high", SortBy: "severity", Limit: 5},
		{ScanID: sc.ID, SortBy: "found_at", Limit: 7, Offset: 2},
		{ScanID: sc.ID, State: "open", SortBy: "updated_at", Desc: true, Limit: 4},
	} {
		f.OrgID = sc.OrgID
		want, wantTotal := listIDs(t, s, f)
		if len(want) == 0 {
			t.Fatalf("%+v: no findings", f)
		}
		f.Text = "sink"
		m, err := matchKeys(ctx, pool, f, true)
		if err != nil {
			t.Fatal(err)
		}
		if !m.not[1] || len(m.description) != 0 || len(m.title) == 0 {
			t.Fatalf("%+v: not %v, %d description keys, %d title keys; want every description and some titles", f, m.not, len(m.description), len(m.title))
		}
		if r, err := s.Resolve(ctx, f); err != nil || r.Text != "" || r.keys != nil {
			t.Fatalf("%+v: resolves to q %q with keys %v (%v), want the filter without q", f, r.Text, r.keys, err)
		}
		got, total := listIDs(t, s, f)
		if fmt.Sprint(got) != fmt.Sprint(want) || total != wantTotal {
			t.Fatalf("%+v: %v total %d, want %v total %d", f, got, total, want, wantTotal)
		}
		if n, err := s.Count(ctx, f); err != nil || n != wantTotal {
			t.Fatalf("%+v: Count %d (%v), want %d", f, n, err, wantTotal)
		}
	}
}

// TestScanOneKeyPage: a search within a scan through one key, whose
// occurrences' index holds the page's order (by severity, or by found_at
// when the key's findings have one severity), reads its page from that
// index directly rather than through a union of streams; the pages equal
// the scan's list filtered by hand, at every offset.
func TestScanOneKeyPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool, sc := reportedScan(t, "ok", 60, func(i int, r *Reported) {
		r.Verified = true
		if i%3 == 0 {
			r.Title, r.Severity = "Rule A", "high"
		}
	})
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET found_at = timestamptz '2026-03-01' + (substr(fingerprint, 3)::int % 7) * interval '1 hour'
		WHERE org_id = $1`, sc.OrgID); err != nil {
		t.Fatal(err)
	}
	for _, sortBy := range []string{"found_at", "severity"} {
		for _, desc := range []bool{false, true} {
			all, _, err := s.List(ctx, Filter{OrgID: sc.OrgID, ScanID: sc.ID, SortBy: sortBy, Desc: desc, Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, fd := range all {
				if fd.Title == "Rule A" {
					want = append(want, fd.ID)
				}
			}
			for offset := 0; offset < len(want)+3; offset += 3 {
				f := Filter{OrgID: sc.OrgID, ScanID: sc.ID, Text: "rule a", SortBy: sortBy, Desc: desc, Limit: 4, Offset: offset}
				r, err := s.Resolve(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				if page, _, _, _ := r.Queries(); strings.Contains(page, "unnest(") {
					t.Fatalf("%s desc=%t: the page reads a union of streams:\n%s", sortBy, desc, page)
				}
				got, total := listIDs(t, s, f)
				exp := want[min(offset, len(want)):min(offset+4, len(want))]
				if fmt.Sprint(got) != fmt.Sprint(exp) || total != int64(len(want)) {
					t.Fatalf("%s desc=%t offset %d: %v total %d, want %v total %d", sortBy, desc, offset, got, total, exp, len(want))
				}
			}
		}
	}
}

// TestScanSearchTotalFromCounters: the total of a scan's q or file prefix
// search through one key column is the sum of the scan's key counters
// (migration 0043), read without an occurrence, with and without a
// severity and a state; through two columns, where a finding could match
// twice, or with another search filter, the matches are counted. Every
// total equals a plain count of the scan's matching findings, after a
// triage that moves findings between states.
func TestScanSearchTotalFromCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool, sc := reportedScan(t, "sk", 60, func(i int, r *Reported) {
		r.Verified = true
		r.Title = fmt.Sprintf("Rule %d", i%3)
		r.Description = fmt.Sprintf("Sink %d reached", i%4)
		r.AffectedFile = fmt.Sprintf("src/m%d/f%d.go", i%2, i%5)
	})
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET state = 'resolved' WHERE org_id = $1 AND right(fingerprint, 1) IN ('1', '4')`, sc.OrgID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f        Filter
		where    string // the filter in SQL
		counters bool
	}{
		{Filter{Text: "rule 1"}, `title ILIKE '%rule 1%'`, true},
		{Filter{Text: "SINK", State: "resolved"}, `description ILIKE '%sink%' AND state = 'resolved'`, true},
		{Filter{FilePrefix: "src/m1/", Severity: "high"}, `starts_with(affected_file, 'src/m1/') AND severity = 'high'`, true},
		{Filter{Text: "1"}, `(title ILIKE '%1%' OR description ILIKE '%1%' OR affected_file ILIKE '%1%')`, false},
		{Filter{Text: "rule 1", Category: "xss"}, `title ILIKE '%rule 1%' AND category = 'xss'`, false},
	} {
		f := tc.f
		f.OrgID, f.ScanID, f.Limit = sc.OrgID, sc.ID, 5
		want := scanMatches(t, pool, sc, tc.where)
		if _, total := listIDs(t, s, f); total != want || want == 0 && tc.f.Category == "" {
			t.Fatalf("%s: total %d, want %d (and some)", tc.where, total, want)
		}
		r, err := s.Resolve(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if counted, plan := totalFromScanCounters(t, pool, r); counted != tc.counters {
			t.Errorf("%s: total from the scan's key counters %t, want %t:\n%s", tc.where, counted, tc.counters, plan)
		}
	}
}

// scanMatches returns the number of the scan's approved findings that
// match where (a condition on the findings, in SQL).
func scanMatches(t *testing.T, pool *pgxpool.Pool, sc Scan, where string) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM findings.findings f WHERE org_id = $1 AND verification_status = 'approved'
		AND EXISTS (SELECT 1 FROM findings.occurrences o WHERE o.scan_id = $2 AND o.finding_id = f.id) AND `+where, sc.OrgID, sc.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// totalFromScanCounters reports whether the resolved filter r's total is
// read from the scan's key counters without an occurrence, with the plan.
func totalFromScanCounters(t *testing.T, pool *pgxpool.Pool, r Filter) (bool, string) {
	t.Helper()
	_, _, count, args := r.Queries()
	plan := planText(t, pool, "EXPLAIN ", count, args)
	return strings.Contains(plan, "finding_scan_key_counts") && !strings.Contains(plan, " on occurrences"), plan
}

// TestScanSearchComplementTotalFromCounters: a scan's q that matches most
// of a column's texts holds the column as its complement (the texts that do
// not match), and its total is the scan's count less the scan's key
// counters of the complement, read without an occurrence, with and without
// a severity and a state; through a title besides, where a finding could
// match twice, the matches are counted, and so they are in a scan of fewer
// findings than the complement's lookups would cost. Every total equals a
// plain count of the scan's matching approved findings, after a triage that
// moves findings between states, beside another scan of the organization
// with the same texts.
func TestScanSearchComplementTotalFromCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// 100 descriptions, 90 of them with "sink" and "reached"; a seventh of
	// the titles with "sink"; a sixth of the findings not verified, whose
	// occurrences no counter counts.
	edit := func(i int, r *Reported) {
		r.Title = "Rule"
		if i%7 == 0 {
			r.Title = "Sink rule"
		}
		r.Description = fmt.Sprintf("Sink %d reached", i%100)
		if i%100 >= 90 {
			r.Description = fmt.Sprintf("Source %d left", i%100)
		}
	}
	s, pool, sc := reportedScan(t, "nk", 300, edit)
	other := Scan{ID: uuid.NewString(), OrgID: sc.OrgID, RepoURL: "https://git.example.com/acme/other", ScanType: "full"}
	if _, err := s.RegisterScan(ctx, other); err != nil {
		t.Fatal(err)
	}
	// And a scan of 12 (10 approved) whose occurrences cost less to count
	// than the complement's lookups.
	small := Scan{ID: uuid.NewString(), OrgID: sc.OrgID, RepoURL: "https://git.example.com/acme/small", ScanType: "full"}
	if _, err := s.RegisterScan(ctx, small); err != nil {
		t.Fatal(err)
	}
	for _, in := range []struct {
		sc Scan
		n  int
	}{{other, 120}, {small, 12}} {
		batch := reported("nk"+in.sc.ID[:8], in.n)
		for i := range batch {
			edit(i, &batch[i])
		}
		if _, err := s.Report(ctx, in.sc, batch, true); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `UPDATE findings.findings SET state = 'resolved' WHERE org_id = $1 AND right(fingerprint, 1) IN ('1', '4')`, sc.OrgID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f        Filter
		where    string // the filter in SQL
		counters bool   // the total from the counters, where the descriptions alone match
	}{
		{Filter{Text: "reached"}, `description ILIKE '%reached%'`, true},
		{Filter{Text: "REACHED", State: "resolved"}, `description ILIKE '%reached%' AND state = 'resolved'`, true},
		{Filter{Text: "reached", Severity: "high"}, `description ILIKE '%reached%' AND severity = 'high'`, true},
		{Filter{Text: "reached", Severity: "low", State: "open"}, `description ILIKE '%reached%' AND severity = 'low' AND state = 'open'`, true},
		{Filter{Text: "sink"}, `(title ILIKE '%sink%' OR description ILIKE '%sink%')`, false},
		{Filter{Text: "sink", State: "resolved"}, `(title ILIKE '%sink%' OR description ILIKE '%sink%') AND state = 'resolved'`, false},
	} {
		for _, in := range []struct {
			sc       Scan
			counters bool // tc's total from the counters in this scan
		}{{sc, tc.counters}, {small, false}} {
			f := tc.f
			f.OrgID, f.ScanID, f.Limit = sc.OrgID, in.sc.ID, 5
			want := scanMatches(t, pool, in.sc, tc.where)
			if want == 0 && in.sc.ID == sc.ID {
				t.Fatalf("%s: no match to count", tc.where)
			}
			if _, total := listIDs(t, s, f); total != want {
				t.Errorf("%s, scan %s: List's total %d, want %d", tc.where, in.sc.RepoURL, total, want)
			}
			if n, err := s.Count(ctx, f); err != nil || n != want {
				t.Errorf("%s, scan %s: Count %d (%v), want %d", tc.where, in.sc.RepoURL, n, err, want)
			}
			r, err := s.Resolve(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if !r.keys.not[1] || len(r.keys.description) != 10 {
				t.Fatalf("%s, scan %s: descriptions held as their complement %t (%d keys), want the 10 that do not match",
					tc.where, in.sc.RepoURL, r.keys.not[1], len(r.keys.description))
			}
			if counted, plan := totalFromScanCounters(t, pool, r); counted != in.counters {
				t.Errorf("%s, scan %s: total from the scan's key counters %t, want %t:\n%s", tc.where, in.sc.RepoURL, counted, in.counters, plan)
			}
		}
	}
}

// planText returns the plan of query under explain (an EXPLAIN with its
// options), one line per node.
func planText(t *testing.T, pool *pgxpool.Pool, explain, query string, args []any) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), explain+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

// TestTrigramPendingListBounded: new texts wait in the trigram indexes'
// pending lists, which every q search scans whole, until a list passes its
// limit; migration 0044 bounds both lists at 512 kB (64 pages) where the
// server's default lets them reach 4 MB. After 1,500 new descriptions and
// paths, reported in batches of 100, neither list holds more than 64
// pages (375 and 187 with the default limit).
func TestTrigramPendingListBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, pool := migratedStore(t)
	if _, err := pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pgstattuple`); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"search_texts", "search_files"} {
		// No vacuum merges the lists behind the test's back.
		if _, err := pool.Exec(ctx, `ALTER TABLE findings.`+table+` SET (autovacuum_enabled = false)`); err != nil {
			t.Fatal(err)
		}
	}
	sc := newScan(t, s)
	for b := range 15 {
		batch := reported(fmt.Sprint("pl", b, "-"), 100)
		for i := range batch {
			n := b*100 + i
			batch[i].Verified = true
			batch[i].Description = fmt.Sprintf("Untrusted input from request parameter %d reaches sink number %d without validation", n, n*7)
			batch[i].AffectedFile = fmt.Sprintf("services/module%d/handlers/request_handler_%d.go", n, n*3)
		}
		if _, err := s.Report(ctx, sc, batch, true); err != nil {
			t.Fatal(err)
		}
	}
	for _, index := range []string{"search_texts_org_trgm", "search_files_org_trgm"} {
		var pages int
		if err := pool.QueryRow(ctx, `SELECT pending_pages FROM pgstatginindex($1::regclass)`, "findings."+index).Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if pages > 64 {
			t.Errorf("%s: %d pending pages, want at most 64", index, pages)
		}
	}
}
