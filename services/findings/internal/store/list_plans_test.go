package store

import (
	"context"
	"fmt"
	"testing"
	"time"

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
	s, pool := u.oneConnection(t)
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
	plans := pagePlans(t, pool)
	for statement, p := range plans {
		assert.EqualValues(t, 8, p.generic, "generic plans of %s", statement)
		assert.Zero(t, p.custom, "custom plans of %s", statement)
	}
	require.Len(t, plans, 2, "the organization's page and the scan's")
}

// planCounts are the plans a prepared statement ran on.
type planCounts struct{ generic, custom int64 }

// pagePlans returns the plans each page statement of 15 rows prepared on
// pool's connections ran on (see preparedPlans).
func pagePlans(t *testing.T, pool *pgxpool.Pool) map[string]planCounts {
	t.Helper()
	return preparedPlans(t, pool, "%LIMIT 15 OFFSET%")
}

// preparedPlans returns the plans each statement LIKE pattern prepared on
// pool's connections ran on (pg_prepared_statements of the connection
// that runs the query: pool is given one).
func preparedPlans(t *testing.T, pool *pgxpool.Pool, pattern string) map[string]planCounts {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements
		WHERE statement LIKE $1 AND statement NOT LIKE '%pg_prepared_statements%'`, pattern)
	require.NoError(t, err)
	plans := map[string]planCounts{}
	for rows.Next() {
		var statement string
		var p planCounts
		require.NoError(t, rows.Scan(&statement, &p.generic, &p.custom))
		plans[statement] = p
	}
	require.NoError(t, rows.Err())
	return plans
}

// oneConnection returns a store on a pool of one connection to u's
// database, whose prepared statements say which plans its runs took.
func (u *unit) oneConnection(t *testing.T) (*Store, *pgxpool.Pool) {
	t.Helper()
	cfg := u.s.Pool.Config().Copy()
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(u.ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return &Store{Pool: pool}, pool
}

// planFixture returns a unit holding 1,800 findings in two scans (app's
// 1,200, lib's 600): eight titles, 30 descriptions (one naming a file),
// 120 paths in three directories, three categories, four tag patterns,
// every severity, found_at seven minutes apart from start (210 hours, the
// repositories' interleaved, so that windows cut whole hours and parts of
// hours), a fifth resolved.
func planFixture(t *testing.T) (u *unit, app, lib Scan, start time.Time) {
	t.Helper()
	u = newUnit(t)
	app = u.scan("https://git.example.com/acme/app")
	lib = u.scan("https://git.example.com/acme/lib")
	// One description names a file, so that q matches through two columns.
	description := func(i int) string {
		if i%30 == 29 {
			return "Sink 29 reached from file39"
		}
		return fmt.Sprintf("Sink %d reached", i%30)
	}
	for _, r := range []struct {
		sc Scan
		n  int
	}{{app, 1200}, {lib, 600}} {
		u.reportMany(r.sc, r.n, func(i int) Reported {
			return Reported{Fingerprint: fmt.Sprintf("%s-%05d", r.sc.RepoURL, i), Title: fmt.Sprintf("Title %c", 'A'+i%8),
				Description: description(i), AffectedFile: fmt.Sprintf("src/%s/file%d.go", []string{"api", "web", "cli"}[i/7%3], i%40),
				Category: []string{"xss", "injection", "ssrf"}[i%3], Severity: Severities[i%len(Severities)],
				Tags: [][]string{{"pci", "cwe-1"}, {"cwe-2"}, nil, {"pci"}}[i%4], Verified: true}
		})
	}
	start = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	_, err := u.s.Pool.Exec(u.ctx, `UPDATE findings.findings f SET found_at = $2::timestamptz + n.i * interval '7 minutes'
		FROM (SELECT id, row_number() OVER (ORDER BY right(fingerprint, 5), fingerprint) AS i FROM findings.findings WHERE org_id = $1) n
		WHERE f.id = n.id`, u.org, start)
	require.NoError(t, err)
	_, err = u.s.Pool.Exec(u.ctx, `UPDATE findings.findings SET state = 'resolved'
		WHERE org_id = $1 AND (fingerprint LIKE '%3' OR fingerprint LIKE '%7')`, u.org)
	require.NoError(t, err)
	return u, app, lib, start
}

// TestColumnSearchesPlannedOnce: the searches on columns (a repository, a
// category, a tag, a found_at window, with or without the spec's filters
// and a scan) that one index serves in order, and q or a file prefix
// through its keys' indexes (one key or several, of one column or two,
// with a tag checked per match), run their pages on generic plans as the
// spec's lists do (see plannedOnce, indexOrdered, keyOrdered). For each such
// page, as List reads it (its band, tag end or count first, see sized), in
// every order and both directions, a first and a deeper page, before and
// after the tables are analyzed, the generic plans of the page and of the
// total (where it too is planned once) read no more rows of the findings,
// their occurrences and their tag rows than the plans made for their
// values (or, for the page, than its end). Planned once, a category with
// a state, a window in update order, a tag with a repository and a scan's
// tag each read more (up to thirty times the rows), and so did a key's
// total with a window and several keys with a repository and a category
// (three times the rows). And the store's pages, on one connection, ran on
// generic plans only and are the export's findings in order.
func TestColumnSearchesPlannedOnce(t *testing.T) {
	u, app, lib, start := planFixture(t)
	mid, h50 := start.Add(105*time.Hour), start.Add(50*time.Hour)
	searches := []struct {
		name string
		f    Filter
	}{
		{"repo", Filter{RepoKey: app.repoKey()}},
		{"category", Filter{Category: "xss"}},
		{"category_none", Filter{Category: "crypto"}},
		{"category_state", Filter{Category: "ssrf", State: "resolved"}},
		{"repo_category_state", Filter{RepoKey: lib.repoKey(), Category: "xss", State: "open"}},
		{"tag", Filter{Tag: "pci"}},
		{"tag_few", Filter{Tag: "cwe-1"}},
		{"tag_category", Filter{Tag: "cwe-2", Category: "injection"}},
		{"tag_repo", Filter{Tag: "pci", RepoKey: lib.repoKey()}},
		{"sev_tag_since", Filter{Severity: "high", Tag: "pci", FoundSince: mid}},
		{"since", Filter{FoundSince: mid}},
		{"until", Filter{FoundUntil: mid}},
		{"hour", Filter{FoundSince: h50, FoundUntil: h50.Add(time.Hour)}},
		{"window_parts", Filter{FoundSince: h50.Add(10 * time.Minute), FoundUntil: h50.Add(140 * time.Minute)}},
		{"window_state", Filter{FoundSince: h50, FoundUntil: mid, State: "open"}},
		{"scan_category", Filter{ScanID: app.ID, Category: "xss"}},
		{"scan_tag", Filter{ScanID: lib.ID, Tag: "pci"}},
		{"scan_repo", Filter{ScanID: app.ID, RepoKey: app.repoKey()}},
		{"scan_other_repo", Filter{ScanID: lib.ID, RepoKey: app.repoKey()}},
		{"scan_since", Filter{ScanID: app.ID, FoundSince: mid}},
		// q or a file prefix through a single key (see keyOrdered).
		{"q_title", Filter{Text: "title c"}},
		{"q_title_state", Filter{Text: "Title C", State: "open"}},
		{"q_title_severity", Filter{Text: "title c", Severity: "high"}},
		{"q_title_repo", Filter{Text: "title c", RepoKey: app.repoKey()}},
		{"q_description", Filter{Text: "sink 7 reached"}},
		{"q_description_since", Filter{Text: "sink 7 reached", FoundSince: mid}},
		{"q_description_state", Filter{Text: "sink 7 reached", State: "resolved"}},
		{"file", Filter{FilePrefix: "src/api/file0.go"}},
		{"file_severity", Filter{FilePrefix: "src/api/file0.go", Severity: "critical"}},
		// q or a file prefix through several keys (see keyUnion,
		// keyDeepPage), of one column or two.
		{"q_descriptions", Filter{Text: "sink 1"}},
		{"q_descriptions_state", Filter{Text: "sink 2", State: "resolved"}},
		{"q_descriptions_severity", Filter{Text: "sink 1", Severity: "high"}},
		{"q_descriptions_until", Filter{Text: "sink 2", FoundUntil: mid}},
		{"files", Filter{FilePrefix: "src/web/"}},
		{"files_few", Filter{FilePrefix: "src/cli/file3"}},
		{"files_state", Filter{FilePrefix: "src/api/file1", State: "open"}},
		{"files_since", Filter{FilePrefix: "src/web/", FoundSince: mid}},
		{"q_descriptions_repo", Filter{Text: "sink 1", RepoKey: lib.repoKey()}},
		{"q_descriptions_category", Filter{Text: "sink 2", Category: "xss"}},
		{"files_repo_category", Filter{FilePrefix: "src/web/", RepoKey: app.repoKey(), Category: "ssrf"}},
		{"q_files_description", Filter{Text: "file39"}},
		{"q_files_description_tag", Filter{Text: "file39", Tag: "pci"}},
		{"q_files_description_state", Filter{Text: "file39", State: "open"}},
		{"q_file_tag", Filter{Text: "web/file39", Tag: "pci"}},
		{"files_q", Filter{FilePrefix: "src/web/", Text: "sink 1"}},
		{"files_q_rare", Filter{FilePrefix: "src/web/", Text: "sink 29"}},
		{"files_q_title", Filter{FilePrefix: "src/api/file1", Text: "title b"}},
	}
	tables := []string{"findings", "occurrences", "finding_tags"}
	read := func(p *dbtest.Prepared) float64 {
		plan, n := p.Explain(), 0.0
		for _, table := range tables {
			n += dbtest.RowsRead(plan, table, true)
		}
		return n
	}
	n, keyed, several, columns := 0, 0, 0, 0
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			_, err := u.s.Pool.Exec(u.ctx, `ANALYZE findings.findings, findings.occurrences, findings.finding_tags`)
			require.NoError(t, err)
		}
		for _, sr := range searches {
			for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
				for _, desc := range []bool{true, false} {
					for _, offset := range []int{0, 150} {
						f := sr.f
						f.OrgID, f.SortBy, f.Desc, f.Limit, f.Offset = u.org, sortBy, desc, 15, offset
						var page, total string
						var pageArgs, totalArgs []any
						var counted, totalOnce bool
						require.NoError(t, inSnapshot(u.ctx, u.s.Pool, func(q batchDBTX) error {
							f, err := resolve(u.ctx, q, f)
							if err != nil {
								return err
							}
							var known int64
							if f, known, counted, err = f.sized(u.ctx, q); err != nil {
								return err
							}
							if !f.plannedOnce() || counted && int64(offset) >= known {
								return nil // planned for its values, or no page to read
							}
							if n, ok := f.keyTotal(); ok && int64(offset) >= n {
								return nil
							}
							if f.keys != nil {
								keyed++
								if cols, keys := f.keys.columns(); len(cols) > 1 || len(keys[0]) > 1 {
									several++
									columns += len(cols) - 1
								}
							}
							totalOnce = f.totalPlannedOnce()
							page, pageArgs, total, totalArgs = f.Queries()
							return nil
						}))
						if page == "" {
							continue
						}
						n++
						t.Run(fmt.Sprintf("analyzed=%t/%s/%s/desc=%t/offset=%d", analyzed, sr.name, sortBy, desc, offset), func(t *testing.T) {
							pages, totals := map[string]float64{}, map[string]float64{}
							for _, mode := range planModes {
								pages[mode] = read(u.prepare(t, mode, fmt.Sprintf("column_page_%d", n), "", page, pageArgs...))
								if !counted && totalOnce {
									totals[mode] = read(u.prepare(t, mode, fmt.Sprintf("column_total_%d", n), "", total, totalArgs...))
								}
							}
							generic, custom := pages["force_generic_plan"], pages["force_custom_plan"]
							assert.LessOrEqual(t, generic, max(custom, float64(offset+f.Limit+1)),
								"rows read by the page's generic plan, against %v by the custom one", custom)
							assert.LessOrEqual(t, totals["force_generic_plan"], totals["force_custom_plan"],
								"rows read by the total's generic plan")
						})
					}
				}
			}
		}
	}

	require.Greater(t, n, 100, "pages planned once")
	require.Greater(t, keyed, 20, "pages of keys planned once")
	require.Greater(t, several, 20, "pages of several keys planned once")
	require.Greater(t, columns, 10, "pages of keys of two columns planned once")
	t.Logf("%d pages planned once, %d of keys, %d of several keys, %d of two columns", n, keyed, several, columns)

	// The store's own runs, on one connection whose prepared statements
	// say which plans ran.
	s, pool := u.oneConnection(t)
	for _, sr := range searches {
		for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
			f := sr.f
			f.OrgID, f.SortBy, f.Desc, f.Limit = u.org, sortBy, true, 15
			want := eachID(t, s, f)
			for page := range 3 {
				f.Offset = page * 40
				got, total := listIDs(t, s, f)
				require.EqualValues(t, len(want), total, sr.name)
				require.Equal(t, append([]string{}, want[min(f.Offset, len(want)):min(f.Offset+f.Limit, len(want))]...), append([]string{}, got...),
					"%s by %s, page at %d", sr.name, sortBy, f.Offset)
			}
		}
	}
	plans := pagePlans(t, pool)
	for statement, p := range plans {
		assert.Positive(t, p.generic, "generic plans of %s", statement)
		assert.Zero(t, p.custom, "custom plans of %s", statement)
	}
	require.NotEmpty(t, plans)
}

// TestSearchesPlannedForTheirValues: a search whose page is not planned
// once (see plannedOnce) runs every statement on plans made for its
// values, however often it runs on a connection (see customPlans). Left
// to the server, the pages of a scan's q, of a category with a state, of
// a window with a state in update order and of a file prefix with a
// repository and a category switched after their fifth run to the plan
// made without the values, which then served every value, and which reads
// up to nine times the rows for some (here a scan's q at its eleventh
// page in update order).
func TestSearchesPlannedForTheirValues(t *testing.T) {
	u, app, lib, start := planFixture(t)
	_, err := u.s.Pool.Exec(u.ctx, `ANALYZE findings.findings, findings.occurrences, findings.finding_tags`)
	require.NoError(t, err)
	scanQ := Filter{OrgID: u.org, ScanID: app.ID, Text: "sink 1", SortBy: "updated_at", Desc: true, Limit: 15, Offset: 150}
	var page string
	var args []any
	require.NoError(t, inSnapshot(u.ctx, u.s.Pool, func(q batchDBTX) error {
		f, err := resolve(u.ctx, q, scanQ)
		if err != nil {
			return err
		}
		if f, _, _, err = f.sized(u.ctx, q); err != nil {
			return err
		}
		require.False(t, f.plannedOnce(), "a scan's q")
		page, args, _, _ = f.Queries()
		return nil
	}))
	read := map[string]float64{}
	for _, mode := range planModes {
		read[mode] = dbtest.RowsRead(u.prepare(t, mode, "scan_q", "", page, args...).Explain(), "occurrences", true)
	}
	require.Greater(t, read["force_generic_plan"], 3*read["force_custom_plan"],
		"occurrences read by the plan made without the values and by the plan made for them")

	s, pool := u.oneConnection(t)
	s.TextCopies = true
	mid := start.Add(105 * time.Hour)
	searches := []Filter{
		{Category: "ssrf", State: "resolved"},
		{Category: "xss", State: "open"},
		{Tag: "pci", RepoKey: lib.repoKey()},
		{FoundSince: mid, FoundUntil: mid.Add(3 * time.Hour)},
		{FoundSince: start, FoundUntil: mid, State: "resolved"},
		{ScanID: lib.ID, Tag: "pci"},
		{ScanID: app.ID, Category: "xss", State: "open"},
		{ScanID: app.ID, Text: "sink 1"},
		{ScanID: lib.ID, FilePrefix: "src/web/"},
		{Text: "title c", RepoKey: app.repoKey()},
		{Text: "sink 2", State: "resolved"},
		{FilePrefix: "src/web/", RepoKey: app.repoKey(), Category: "ssrf"},
	}
	custom := 0
	for _, sf := range searches {
		for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
			f := sf
			f.OrgID, f.SortBy, f.Desc, f.Limit = u.org, sortBy, true, 15
			if r, err := u.s.Resolve(u.ctx, f); err != nil || r.plannedOnce() {
				require.NoError(t, err)
				continue // its statements may be the same as those planned once
			}
			custom++
			for run := range 8 {
				f.Offset = run % 2 * 150
				_, _, err := s.List(u.ctx, f)
				require.NoError(t, err)
			}
		}
	}
	require.Greater(t, custom, 20, "searches planned for their values")
	ran := 0
	for statement, p := range preparedPlans(t, pool, "%") {
		assert.False(t, p.generic > 0 && p.custom > 0, "%s ran on %d plans made for its values, then on %d made without them", statement, p.custom, p.generic)
		if p.custom > 5 {
			ran++
		}
	}
	require.Greater(t, ran, 10, "statements run more than five times")
}

// TestIndexOrdered: a search on columns is planned once exactly where one
// index holds each of its equalities ahead of its order (see indexOrdered).
func TestIndexOrdered(t *testing.T) {
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		f    Filter
		once map[string]bool // by sort: found_at, severity, updated_at
	}{
		{"repository", Filter{RepoKey: "r"}, map[string]bool{"found_at": true, "severity": true, "updated_at": true}},
		{"category", Filter{Category: "xss"}, map[string]bool{"found_at": true, "severity": true, "updated_at": true}},
		{"repository and category", Filter{RepoKey: "r", Category: "xss"}, map[string]bool{"found_at": true, "severity": true}},
		{"category and severity", Filter{Category: "xss", Severity: "high"}, map[string]bool{"found_at": true, "severity": true}},
		{"category and state", Filter{Category: "xss", State: "open"}, map[string]bool{}},
		{"repository, category and state", Filter{RepoKey: "r", Category: "xss", State: "open"}, map[string]bool{}},
		{"tag", Filter{Tag: "pci"}, map[string]bool{"found_at": true, "severity": true, "updated_at": true}},
		{"tag and severity", Filter{Tag: "pci", Severity: "low"}, map[string]bool{"found_at": true, "severity": true}},
		{"tag and state", Filter{Tag: "pci", State: "open"}, map[string]bool{}},
		{"tag and repository", Filter{Tag: "pci", RepoKey: "r"}, map[string]bool{}},
		{"tag and window", Filter{Tag: "pci", FoundSince: at}, map[string]bool{"found_at": true}},
		{"window", Filter{FoundSince: at, FoundUntil: at.Add(time.Hour)}, map[string]bool{"found_at": true}},
		{"window and state", Filter{FoundUntil: at, State: "open"}, map[string]bool{"found_at": true}},
		{"window of one severity's rank", Filter{FoundSince: at, rankLo: 3, rankHi: 3}, map[string]bool{"found_at": true, "severity": true}},
		{"window of two ranks", Filter{FoundSince: at, rankLo: 3, rankHi: 4}, map[string]bool{}},
		{"window and repository", Filter{FoundSince: at, RepoKey: "r"}, map[string]bool{"found_at": true}},
		{"window, repository and state", Filter{FoundSince: at, RepoKey: "r", State: "open"}, map[string]bool{}},
		{"scan and repository", Filter{ScanID: "s", RepoKey: "r"}, map[string]bool{"found_at": true, "severity": true, "updated_at": true}},
		{"scan and category", Filter{ScanID: "s", Category: "xss"}, map[string]bool{}},
		{"q", Filter{Text: "sql"}, map[string]bool{}},
		{"file prefix", Filter{FilePrefix: "src/"}, map[string]bool{}},
	} {
		for _, sortBy := range []string{"found_at", "severity", "updated_at"} {
			f := tc.f
			f.SortBy = sortBy
			assert.Equal(t, tc.once[sortBy], f.plannedOnce(), "%s by %s", tc.name, sortBy)
		}
	}
}
