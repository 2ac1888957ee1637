package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// TestKeySearchesCheckCategoryAndRepoInTheirIndexes: q or a file prefix
// together with a category or a repository is answered from the key
// indexes' entries, which carry both (migration 0034), without reading the
// findings the keys match: before, each entry's finding was read to check
// them (at a million findings, 100–290 ms for a file prefix of 20,000
// findings with either). The total reads index entries only, and the page
// reads no finding but the page's own; both are those of a plain query
// over the findings.
//
// The organization is small, so the statements run with indexScansOnly.
func TestKeySearchesCheckCategoryAndRepoInTheirIndexes(t *testing.T) {
	u := newUnit(t)
	app := u.combinedFixture()
	for _, tc := range []struct {
		name  string
		f     Filter
		where string // the filter in SQL
	}{
		{"file_category", Filter{FilePrefix: "src/api/", Category: "xss"}, `starts_with(affected_file, 'src/api/') AND category = 'xss'`},
		{"file_repository", Filter{FilePrefix: "src/api/", RepoKey: app}, `starts_with(affected_file, 'src/api/') AND repo_key = '` + app + `'`},
		{"q_category", Filter{Text: "SINK 1", Category: "ssrf"}, `description ILIKE '%sink 1%' AND category = 'ssrf'`},
		// Three descriptions of thirty: a tenth of the repository's findings
		// (more would be found walking the repository's list).
		{"q_repository", Filter{Text: "1 unchecked", RepoKey: app}, `description ILIKE '%1 unchecked%' AND repo_key = '` + app + `'`},
		{"title_category_state", Filter{Text: "injection", Category: "xss", State: "open"}, `title ILIKE '%injection%' AND category = 'xss' AND state = 'open'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, sortBy := range []string{"found_at", "severity", "updated_at"} {
				f := tc.f
				f.OrgID, f.SortBy, f.Desc, f.Limit, f.Offset = u.org, sortBy, true, 5, 5
				u.checkAgainstSQL(t, f, tc.where)

				r, err := u.s.Resolve(u.ctx, f)
				require.NoError(t, err)
				require.NotNil(t, r.keys, "resolved")
				require.True(t, r.keys.indexed(), "the keys' indexes serve the search")
				page, pageArgs, count, countArgs := r.Queries()
				for _, mode := range planModes {
					// A subtest per plan, whose end releases its transactions.
					t.Run(sortBy+"/"+mode, func(t *testing.T) {
						c := u.prepareWith(t, indexScansOnly, mode, "combined_count_"+tc.name+"_"+sortBy, "", count, countArgs...)
						assert.Empty(t, rowScans(c.Explain(), "findings", ""), "finding rows read for the total")
						p := u.prepareWith(t, indexScansOnly, mode, "combined_page_"+tc.name+"_"+sortBy, "", page, pageArgs...)
						assert.Empty(t, rowScans(p.Explain(), "findings", "findings_pkey"), "finding rows read for the page")
					})
				}
			}
		})
	}
}

// indexScansOnly turns sequential and bitmap scans off for the plan
// checks of searches over a small organization: what they check is that
// the indexes can answer a statement, which the server chooses at scale
// (see BenchmarkList1M's rows of two search filters).
var indexScansOnly = []string{"SET LOCAL enable_seqscan = off", "SET LOCAL enable_bitmapscan = off"}

// combinedFixture reports the findings the tests of two search filters
// search, in two repositories, and returns the first's key: beside 2,400
// that match none of the searches (so that the searches' matches are a
// small share of the organization's findings, and their pages read the
// keys' indexes rather than walk the list), 600 in each repository with
// eight titles, three categories, 30 descriptions, 160 paths under four
// directories, and tags. A title is thus far more selective than a
// category, as in a real organization, where the generic plan of a page
// of one title with a category would otherwise be as likely to walk the
// category's index, checking each entry's title on its finding. The findings' table and tag rows are vacuumed,
// so that their index entries can be read without their rows.
func (u *unit) combinedFixture() string {
	u.t.Helper()
	u.largeScan(2400, "crypto")
	repos := []Scan{u.scan("https://git.example.com/acme/app"), u.scan("https://git.example.com/acme/lib")}
	for r, sc := range repos {
		u.reportMany(sc, 600, func(i int) Reported {
			return Reported{Fingerprint: fmt.Sprintf("fp-%d-%04d", r, i), Title: []string{"SQL injection", "Open redirect", "Path traversal", "Weak hash", "XML external entity",
				"Server-side request forgery", "Hard-coded secret", "Insecure cookie"}[i/3%8],
				Severity: Severities[i%len(Severities)], Category: []string{"xss", "injection", "ssrf"}[i%3],
				Description:  fmt.Sprintf("User input reaches sink %d unchecked.", i%30),
				AffectedFile: fmt.Sprintf("src/%s/file%d.go", []string{"api", "web", "cli", "lib"}[i/7%4], i%40),
				Tags:         []string{fmt.Sprintf("cwe-%d", i%4), "pci"}, Verified: true}
		})
	}
	u.vacuumAllVisible("findings", "finding_tags")
	return repos[0].repoKey()
}

// allVisibleWait bounds vacuumAllVisible's wait.
const allVisibleWait = 15 * time.Second

// vacuumAllVisible vacuums and analyzes the tables until the visibility
// map covers every page of each, so that the planner prices index-only
// scans as the plans under test expect. A page is marked only when each of
// its rows is hinted committed and older than every snapshot in the
// database, and when VACUUM gets its cleanup lock (no other backend holds a
// pin on it). The tests' private server commits asynchronously, and a row
// is hinted only once its commit record is flushed, which the server does
// within a fraction of a second, or sooner after any synchronous commit:
// each try makes one. A snapshot held in the database holds rows back
// while it lasts; the server's own automatic vacuums and analyzes take
// some, so they are turned off on the tables and each try cancels those
// running in the database.
//
// On a loaded machine a few pages may still stay unmarked for a minute (a
// run of make test once left 13 of 239, with no session holding a
// snapshot). What the plans under test depend on is the statistic the
// planner reads, pg_class.relallvisible, not the map itself: after
// allVisibleWait the statistic is set to what a vacuum of the settled
// table sets it to, every page, and the test logs the pages left and the
// sessions holding snapshots (the tests connect as the server's
// superuser, who may write the statistic). The answers never depend on it: an
// index-only scan checks the map of each page it reads and fetches the
// rows of unmarked pages from the table.
func (u *unit) vacuumAllVisible(tables ...string) {
	u.t.Helper()
	for _, table := range tables {
		deadline := time.Now().Add(allVisibleWait)
		// The database is the test's own: its tables need no automatic
		// vacuum or analyze, whose workers, racing with the VACUUM below,
		// can keep it from marking pages (a page pinned by another backend
		// is not pruned, and so not marked; a worker's snapshot holds the
		// horizon back).
		_, err := u.s.Pool.Exec(u.ctx, "ALTER TABLE findings."+table+" SET (autovacuum_enabled = off)")
		require.NoError(u.t, err)
		for {
			u.flushAndCancelAutovacuum()
			_, err := u.s.Pool.Exec(u.ctx, "VACUUM ANALYZE findings."+table)
			require.NoError(u.t, err)
			var visible, pages int
			require.NoError(u.t, u.s.Pool.QueryRow(u.ctx, `SELECT relallvisible, relpages FROM pg_class WHERE oid = $1::regclass`,
				"findings."+table).Scan(&visible, &pages))
			if visible >= pages {
				break
			}
			if time.Now().After(deadline) {
				u.t.Logf("%s: %d of %d pages all-visible after %s, the planner's statistic set to every page; sessions with snapshots: %s",
					table, visible, pages, allVisibleWait, u.snapshotHolders())
				_, err := u.s.Pool.Exec(u.ctx, `UPDATE pg_class SET relallvisible = relpages WHERE oid = $1::regclass`, "findings."+table)
				require.NoError(u.t, err)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// flushAndCancelAutovacuum commits a transaction synchronously, which
// flushes every commit record written before it, and cancels the
// automatic vacuums and analyzes running in the unit's database (see
// vacuumAllVisible).
func (u *unit) flushAndCancelAutovacuum() {
	u.t.Helper()
	tx, err := u.s.Pool.Begin(u.ctx)
	require.NoError(u.t, err)
	_, err = tx.Exec(u.ctx, "SET LOCAL synchronous_commit = on")
	require.NoError(u.t, err)
	_, err = tx.Exec(u.ctx, "SELECT pg_current_xact_id()")
	require.NoError(u.t, err)
	require.NoError(u.t, tx.Commit(u.ctx))
	_, err = u.s.Pool.Exec(u.ctx, `SELECT pg_cancel_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'autovacuum worker'`)
	require.NoError(u.t, err)
}

// snapshotHolders describes the other sessions of the unit's database
// that hold a snapshot or a transaction id, and the server's sessions of
// no database that do (which hold every database's horizon back), for a
// failure message.
func (u *unit) snapshotHolders() string {
	rows, err := u.s.Pool.Query(u.ctx, `SELECT format('%s %s %s %s since %s: %s', pid, coalesce(datname, '-'), backend_type, state, xact_start, left(query, 80))
		FROM pg_stat_activity WHERE (datname = current_database() OR datname IS NULL) AND pid <> pg_backend_pid()
			AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)`)
	if err != nil {
		return err.Error()
	}
	holders, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err.Error()
	}
	return fmt.Sprint(holders)
}

// TestTagSearchesCheckFiltersOnTagRows: a tag with a category, a
// repository, q or a file prefix is answered from the tag's rows, which
// carry the category and repository (migration 0035) and the finding's
// search keys (0045) as their index entries do (0036, 0046), without
// reading a finding but the page's own: before, each tag row's finding was
// read to check them (at a million findings, 21–59 ms for a tag of 25,000
// with a repository, about 108 ms with a q that matches none of them).
// Pages and totals are those of a plain query over the findings, in every
// order, across the organization and within a scan, and both read the tag
// rows' index entries alone.
func TestTagSearchesCheckFiltersOnTagRows(t *testing.T) {
	u := newUnit(t)
	app := u.combinedFixture()
	var appScan string
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT id::text FROM findings.scans WHERE org_id = $1 AND repo_key = $2`, u.org, app).Scan(&appScan))
	for _, tc := range []struct {
		name  string
		f     Filter
		where string // the filter in SQL
	}{
		{"category", Filter{Tag: "cwe-1", Category: "xss"}, `'cwe-1' = ANY(tags) AND category = 'xss'`},
		{"repository", Filter{Tag: "pci", RepoKey: app}, `'pci' = ANY(tags) AND repo_key = '` + app + `'`},
		{"category_repository_state", Filter{Tag: "pci", Category: "ssrf", RepoKey: app, State: "open"},
			`'pci' = ANY(tags) AND category = 'ssrf' AND repo_key = '` + app + `' AND state = 'open'`},
		{"scan_category", Filter{ScanID: appScan, Tag: "cwe-2", Category: "injection"},
			`'cwe-2' = ANY(tags) AND category = 'injection' AND repo_key = '` + app + `'`},
		{"q", Filter{Tag: "cwe-1", Text: "redirect"},
			`'cwe-1' = ANY(tags) AND (title ILIKE '%redirect%' OR description ILIKE '%redirect%' OR affected_file ILIKE '%redirect%')`},
		{"prefix", Filter{Tag: "pci", FilePrefix: "src/web/"}, `'pci' = ANY(tags) AND affected_file LIKE 'src/web/%'`},
		{"prefix_q_state", Filter{Tag: "pci", FilePrefix: "src/web/", Text: "sink 1", State: "open"},
			`'pci' = ANY(tags) AND affected_file LIKE 'src/web/%' AND description ILIKE '%sink 1%' AND state = 'open'`},
		{"scan_q", Filter{ScanID: appScan, Tag: "cwe-2", Text: "sink 1"},
			`'cwe-2' = ANY(tags) AND description ILIKE '%sink 1%' AND repo_key = '` + app + `'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u.checkOrders(t, "tag_"+tc.name, tc.f, tc.where, func(t *testing.T, _ Filter, page, count *dbtest.Prepared) {
				plan := count.Explain()
				assert.Zero(t, dbtest.RowsRead(plan, "findings", false), "finding rows read for the total")
				assert.Empty(t, rowScans(plan, "finding_tags", ""), "tag rows read for the total")
				plan = page.Explain()
				assert.Empty(t, rowScans(plan, "findings", "findings_pkey"), "finding rows read for the page")
				assert.Empty(t, rowScans(plan, "finding_tags", ""), "tag rows read for the page")
			})
		})
	}
}

// TestTagWithNarrowSearchReadsKeys: a tag with a q or a file prefix whose
// matches are few against the tag's findings is read from the keys'
// indexes, each match checked for the tag (see keyDriven): its total reads
// one tag row per match (the tag rows' primary key) rather than every row
// of the tag. A broad q is still read from the tag's rows. Pages and
// totals are those of a plain query over the findings, in every order.
func TestTagWithNarrowSearchReadsKeys(t *testing.T) {
	u := newUnit(t)
	u.combinedFixture() // every finding of the two repositories has pci
	for _, tc := range []struct {
		name   string
		f      Filter
		where  string
		driven bool
	}{
		{"narrow q", Filter{Tag: "pci", Text: "sink 29"}, `'pci' = ANY(tags) AND description ILIKE '%sink 29%'`, true},
		{"narrow prefix with a state", Filter{Tag: "pci", FilePrefix: "src/api/file1", State: "open"},
			`'pci' = ANY(tags) AND affected_file LIKE 'src/api/file1%' AND state = 'open'`, true},
		{"broad q", Filter{Tag: "pci", Text: "sink"}, `'pci' = ANY(tags) AND description ILIKE '%sink%'`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u.checkOrders(t, "tag_keys_"+tc.name, tc.f, tc.where, func(t *testing.T, f Filter, _, count *dbtest.Prepared) {
				assert.Equal(t, tc.driven, f.keyDriven(), "read from the keys")
				total, err := u.s.Count(u.ctx, f)
				require.NoError(t, err)
				read := dbtest.RowsRead(count.Explain(), "finding_tags", false)
				if tc.driven {
					assert.LessOrEqual(t, read, float64(total), "tag rows read for the total")
				} else {
					assert.GreaterOrEqual(t, read, float64(1200), "tag rows read for the total")
				}
			})
		})
	}
}

// TestTagWithQCountedFirst: a tag with q read from the tag's rows (see
// keyDriven), and a file prefix with q, are counted before their first
// page, so that a q that matches none of the tag's or the prefix's
// findings reads no page: the page would read every row of the tag, or
// every index entry of the prefix's paths, to find none.
func TestTagWithQCountedFirst(t *testing.T) {
	u := newUnit(t)
	u.combinedFixture()
	rec := &statements{}
	ts := &Store{Pool: tracedPool(t, u.s.Pool, rec, 0)}
	for _, tc := range []struct {
		name  string
		f     Filter
		total int64
		reads int // statements List runs: the key lookup, the total, the page unless empty
	}{
		// cwe-0's findings have even description numbers only.
		{"none", Filter{Tag: "cwe-0", Text: "sink 29"}, 0, 2},
		{"some", Filter{Tag: "cwe-1", Text: "sink 29"}, 20, 3},
		// Nor do the files numbered 1 under src/api/ hold any: src/api/
		// holds i/7%4 == 0, file1 i%40 == 1.
		{"a prefix with q, none", Filter{FilePrefix: "src/api/file1.go", Text: "sink 28"}, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.OrgID, f.SortBy, f.Desc, f.Limit = u.org, "found_at", true, 15
			r, err := u.s.Resolve(u.ctx, f)
			require.NoError(t, err)
			require.False(t, r.keyDriven(), "read from the tag's rows or the prefix's paths")
			rec.reads()
			list, total, err := ts.List(u.ctx, f)
			require.NoError(t, err)
			assert.Equal(t, tc.total, total)
			assert.Len(t, list, int(min(tc.total, 15)))
			assert.Len(t, rec.reads(), tc.reads, "statements List ran")
		})
	}
}

// TestPrefixWithQReadsPathIndexesAlone: a file prefix with q is read
// through the prefix's paths, and q is checked on the title and
// description keys their index entries carry (migration 0047), so that
// neither the page nor the total reads a finding but the page's own
// (before, every finding of the prefix was read to check q). Pages and
// totals are those of a plain query over the findings, in every order.
func TestPrefixWithQReadsPathIndexesAlone(t *testing.T) {
	u := newUnit(t)
	u.combinedFixture()
	for _, tc := range []struct {
		name  string
		f     Filter
		where string
	}{
		{"description", Filter{FilePrefix: "src/web/", Text: "sink 1"}, `affected_file LIKE 'src/web/%' AND description ILIKE '%sink 1%'`},
		{"title with a state", Filter{FilePrefix: "src/api/", Text: "redirect", State: "open"},
			`affected_file LIKE 'src/api/%' AND title ILIKE '%redirect%' AND state = 'open'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u.checkOrders(t, "prefix_q_"+tc.name, tc.f, tc.where, func(t *testing.T, _ Filter, page, count *dbtest.Prepared) {
				assert.Empty(t, rowScans(count.Explain(), "findings", ""), "finding rows read for the total")
				assert.Empty(t, rowScans(page.Explain(), "findings", "findings_pkey"), "finding rows read for the page")
			})
		})
	}
}

// checkOrders checks f in each order (newest or most severe first; a page
// of 5 after the first) against a plain query with the conditions where
// (see checkAgainstSQL), then prepares its page and total as List runs
// them (q and a file prefix resolved to keys) under each plan mode, with
// index scans only (see indexScansOnly), and hands them to check with the
// resolved filter. name names the prepared statements.
func (u *unit) checkOrders(t *testing.T, name string, f Filter, where string, check func(t *testing.T, f Filter, page, count *dbtest.Prepared)) {
	t.Helper()
	name = strings.ReplaceAll(name, " ", "_")
	for _, sortBy := range []string{"found_at", "severity", "updated_at"} {
		f := f
		f.OrgID, f.SortBy, f.Desc, f.Limit, f.Offset = u.org, sortBy, true, 5, 5
		u.checkAgainstSQL(t, f, where)
		f, err := u.s.Resolve(u.ctx, f)
		require.NoError(t, err)
		page, pageArgs, count, countArgs := f.Queries()
		for _, mode := range planModes {
			t.Run(sortBy+"/"+mode, func(t *testing.T) {
				c := u.prepareWith(t, indexScansOnly, mode, name+"_count_"+sortBy, "", count, countArgs...)
				p := u.prepareWith(t, indexScansOnly, mode, name+"_page_"+sortBy, "", page, pageArgs...)
				check(t, f, p, c)
			})
		}
	}
}

// checkAgainstSQL checks f's page (a page of 5 after the first) and its
// total against a plain query over the organization's findings with the
// conditions where, which must match more than two pages.
func (u *unit) checkAgainstSQL(t *testing.T, f Filter, where string) {
	t.Helper()
	want := u.plainIDs(t, f, where)
	require.Greater(t, len(want), 10, "matches")
	ids, total := listIDs(t, u.s, f)
	require.Equal(t, want[5:10], ids, "%s: page 2", f.SortBy)
	require.EqualValues(t, len(want), total, "%s: total", f.SortBy)
}

// TestWalkReadsTheListIndexAlone: a q whose keys are many and match much
// of the list walks the organization's list, testing each entry's keys,
// and reads the list's index alone in every order and under either plan,
// the findings' rows fetched only for the page, by id (migration 0048:
// the list's indexes carry the key columns). Without the state, a
// repository or a category, which those indexes do not carry, the walk
// is priced as the index-only read it is.
func TestWalkReadsTheListIndexAlone(t *testing.T) {
	u := newUnit(t)
	u.combinedFixture()
	// 30 descriptions, each a thirtieth of a third of the findings.
	u.checkOrders(t, "walk_index_only", Filter{Text: "unchecked"}, `description ILIKE '%unchecked%'`, func(t *testing.T, f Filter, page, _ *dbtest.Prepared) {
		require.NotNil(t, f.keys, "resolved")
		require.True(t, f.keys.walk, "a walk of the list")
		assert.Empty(t, rowScans(page.Explain(), "findings", "findings_pkey"), "findings read other than from an index alone or by id")
	})
}

// TestPrefixWithQIsNotWalked: with a file prefix and q, the keys are the
// prefix's and q is tested on top, so the prefix's matches only bound what
// a walk of the list would find; such a search reads the paths' indexes
// even where an index-only walk priced by the prefix's matches alone would
// look cheaper (it does here: the prefix's 300 findings in 40 paths among
// 3,600, a page ending at 10).
func TestPrefixWithQIsNotWalked(t *testing.T) {
	u := newUnit(t)
	u.combinedFixture()
	f := Filter{OrgID: u.org, FilePrefix: "src/web/", Text: "sink 1", SortBy: "found_at", Desc: true, Limit: 5, Offset: 5}
	u.checkAgainstSQL(t, f, `affected_file LIKE 'src/web/%' AND description ILIKE '%sink 1%'`)
	r, err := u.s.Resolve(u.ctx, f)
	require.NoError(t, err)
	require.NotNil(t, r.keys, "resolved")
	// The walk's price without q: below the keys' cost.
	m := &matched{}
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT count(*) FROM findings.findings WHERE org_id = $1 AND verification_status = 'approved'`, u.org).Scan(&m.all))
	require.Less(t, 2*r.walked(r.keys, m, 10, r.keys.matched[2]), float64(min(r.keys.matched[2], r.keys.hits*10)), "an index-only walk's price")
	assert.False(t, r.keys.walk, "the paths' indexes serve the search")
}

// rowScans returns the scans of table's rows in a plan, other than
// lookups through the index except (for the findings, the page's own rows,
// fetched by id): each as its node type and index.
func rowScans(plan map[string]any, table, except string) []string {
	var scans []string
	dbtest.EachNode(plan, func(node map[string]any) {
		kind, _ := node["Node Type"].(string)
		index, _ := node["Index Name"].(string)
		if node["Relation Name"] != table || kind == "Index Only Scan" || except != "" && index == except {
			return
		}
		scans = append(scans, kind+" "+index)
	})
	slices.Sort(scans)
	return scans
}

// TestFilteredKeysFirstPageCutAtBound checks that the first page of a
// file prefix of twelve paths within one repository (which holds four
// times as many findings outside it), where each path has fewer findings
// there than the page holds and four times as many in each of two other
// repositories, found at the same times, reads the paths'
// index entries only as far as a bound read from the paths' second
// findings in the repository (see keyBounds), not every entry of every
// path; and that the page is the plain query's.
func TestFilteredKeysFirstPageCutAtBound(t *testing.T) {
	u := newUnit(t)
	repos := []Scan{u.scan("https://git.example.com/acme/a"), u.scan("https://git.example.com/acme/b"), u.scan("https://git.example.com/acme/c")}
	for round := range 10 {
		for r, sc := range repos {
			per, other := 4, 0 // findings per path and round; outside the prefix
			if r == 0 {
				per, other = 1, 40
			}
			u.reportMany(sc, 12*per+other, func(i int) Reported {
				fp := fmt.Sprintf("r%d-%d-%d", r, round, i)
				file := fmt.Sprintf("src/p%02d.go", i%12)
				if i >= 12*per {
					file = "lib/util.go"
				}
				return Reported{Fingerprint: fp, Title: "Finding " + fp, Category: "injection", Severity: "high", Verified: true,
					AffectedFile: file}
			})
		}
	}
	u.vacuumAllVisible("findings")
	repo := repos[0].repoKey()
	for _, sortBy := range []string{"found_at", "severity", "updated_at"} {
		f := Filter{OrgID: u.org, FilePrefix: "src/", RepoKey: repo, SortBy: sortBy, Desc: true, Limit: 15}
		var want []string
		require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT array_agg(id::text ORDER BY `+f.orderBy("f")+`)
			FROM (SELECT * FROM findings.findings f WHERE org_id = $1 AND repo_key = $2 AND starts_with(affected_file, 'src/')
				ORDER BY `+f.orderBy("f")+` LIMIT 15) f`,
			u.org, repo).Scan(&want))
		ids, total := listIDs(t, u.s, f)
		require.Equal(t, want, ids, sortBy)
		require.EqualValues(t, 120, total, sortBy)

		r, err := u.s.Resolve(u.ctx, f)
		require.NoError(t, err)
		require.True(t, r.keys.indexed(), "the keys' indexes serve the search")
		page, args, _, _ := r.Queries()
		for _, mode := range planModes {
			t.Run(sortBy+"/"+mode, func(t *testing.T) {
				p := u.prepareWith(t, indexScansOnly, mode, "filtered_first_page_"+sortBy, "", page, args...)
				// Each path holds 90 entries, 10 of them the repository's: read
				// whole, 1,080. Up to the bound, about two rounds of each.
				assert.Less(t, findingsRead(p), 500.0, "findings' index entries and rows read")
			})
		}
	}
}

// TestKeysTestedInAHash: resolved keys that only test rows found
// otherwise (a tag's rows, a walk of the organization's list) are looked
// up in a hash under either plan, where a generic plan tested col =
// ANY($n) against each key in turn for every row (see hashedKeysMin), and
// a walk's page fetches its findings by id. Pages and totals are those of
// a plain query over the findings, in every order.
func TestKeysTestedInAHash(t *testing.T) {
	u := newUnit(t)
	u.combinedFixture()
	for _, tc := range []struct {
		name  string
		f     Filter
		where string
		table string // whose rows the keys test
	}{
		// 30 descriptions, 40 paths: each far fewer than the tag's findings.
		{"tag with q", Filter{Tag: "pci", Text: "sink"}, `'pci' = ANY(tags) AND description ILIKE '%sink%'`, "finding_tags"},
		{"tag with a prefix", Filter{Tag: "pci", FilePrefix: "src/web/"}, `'pci' = ANY(tags) AND affected_file LIKE 'src/web/%'`, "finding_tags"},
		// 30 descriptions, each a thirtieth of a third of the findings.
		{"walk", Filter{Text: "unchecked"}, `description ILIKE '%unchecked%'`, "findings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u.checkOrders(t, "hashed_"+tc.name, tc.f, tc.where, func(t *testing.T, f Filter, page, count *dbtest.Prepared) {
				require.NotNil(t, f.keys, "resolved")
				require.GreaterOrEqual(t, len(f.keys.description)+len(f.keys.file), hashedKeysMin, "keys")
				plan := page.Explain()
				assert.Zero(t, dbtest.CondsWith(plan, tc.table, "_key = ANY ("), "page: keys tested in turn")
				if f.Tag != "" {
					require.False(t, f.keyDriven(), "read from the tag's rows")
					assert.Zero(t, dbtest.CondsWith(count.Explain(), tc.table, "_key = ANY ("), "total: keys tested in turn")
					return
				}
				require.True(t, f.keys.walk, "a walk of the list")
				if !strings.HasSuffix(t.Name(), "force_generic_plan") {
					return
				}
				// The page's findings are fetched by id even where the planner
				// would rather join them another way (as a generic plan did,
				// taking LIMIT $n for a guess at many rows): the findings are
				// read by the walk and by primary key lookups, nothing else.
				sql, args, _, _ := f.Queries()
				p := u.prepareWith(t, []string{"SET LOCAL enable_nestloop = off"}, "force_generic_plan", "hashed_walk_fetch_"+f.SortBy, "", sql, args...)
				var reads []string
				dbtest.EachNode(p.Explain(), func(node map[string]any) {
					if index, _ := node["Index Name"].(string); node["Relation Name"] == "findings" && index != "findings_pkey" {
						reads = append(reads, fmt.Sprint(node["Node Type"], " ", index))
					}
				})
				assert.Len(t, reads, 1, "findings read other than by id: %v", reads)
			})
		})
	}
}

// TestTagSeveritiesPruneKeys: with a tag across every scan, a q's keys are
// held only when they have findings of a severity the tag's findings have
// (the counters tell both), so that a q whose texts belong to rules of
// other severities resolves to no key and answers without reading the
// tag's rows. A key of the tag's severities is held even when no finding
// has both. Totals and pages are those of a plain query in every case.
func TestTagSeveritiesPruneKeys(t *testing.T) {
	u := newUnit(t)
	sc := u.scan("https://git.example.com/acme/rules")
	rules := []struct{ title, severity, tag string }{
		{"SQL injection in query", "high", "cwe-89"},
		{"Hard-coded credential", "critical", "cwe-798"},
		{"Weak hash", "high", "cwe-327"},
	}
	u.reportMany(sc, 120, func(i int) Reported {
		r := rules[i%3]
		return Reported{Fingerprint: fmt.Sprintf("fp-%03d", i), Title: r.title, Severity: r.severity, Category: "injection",
			Description: fmt.Sprintf("Found by rule %d", i%3), AffectedFile: fmt.Sprintf("src/f%d.go", i%5), Tags: []string{r.tag},
			Verified: true}
	})
	for _, tc := range []struct {
		name  string
		f     Filter
		where string
		held  bool // whether q resolves to some key
		total int64
	}{
		{"other severities", Filter{Tag: "cwe-89", Text: "credential"}, `'cwe-89' = ANY(tags) AND title ILIKE '%credential%'`, false, 0},
		{"other severities with a state", Filter{Tag: "cwe-89", Text: "credential", State: "open"},
			`'cwe-89' = ANY(tags) AND title ILIKE '%credential%' AND state = 'open'`, false, 0},
		{"the tag's severity, no finding with both", Filter{Tag: "cwe-89", Text: "hash"}, `'cwe-89' = ANY(tags) AND title ILIKE '%hash%'`, true, 0},
		{"the tag's own rule", Filter{Tag: "cwe-89", Text: "injection"}, `'cwe-89' = ANY(tags) AND title ILIKE '%injection%'`, true, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.OrgID, f.SortBy, f.Desc, f.Limit = u.org, "severity", true, 50
			r, err := u.s.Resolve(u.ctx, f)
			require.NoError(t, err)
			require.NotNil(t, r.keys)
			assert.Equal(t, tc.held, len(r.keys.title)+len(r.keys.description)+len(r.keys.file) > 0, "keys held")
			assert.Equal(t, tc.total, u.listAgainstSQL(t, f, tc.where))
		})
	}
}

// TestPrefixWithQSeveritiesPruneKeys: with a file prefix and q, the
// prefix's paths are held only when they have findings of a severity that
// q's matches have (the key counters of the texts and paths q matches), so
// that a q through rules of other severities than the prefix's findings
// resolves to no key and answers at once. A q matching more than
// qSeverityKeysMax texts and paths prunes nothing. Totals and pages are
// those of a plain query in every case.
func TestPrefixWithQSeveritiesPruneKeys(t *testing.T) {
	u := newUnit(t)
	sc := u.scan("https://git.example.com/acme/dirs")
	// src/web/ holds the XSS findings (medium), src/db/ the SQL injections
	// (critical); each description is its own, the injections' 70 all
	// with "query".
	u.reportMany(sc, 140, func(i int) Reported {
		title, sev, dir, where := "Reflected XSS", "medium", "web", "page"
		if i%2 == 1 {
			title, sev, dir, where = "SQL injection", "critical", "db", "query"
		}
		return Reported{Fingerprint: fmt.Sprintf("fp-%03d", i), Title: title, Severity: sev, Category: "injection",
			Description: fmt.Sprintf("Issue %d in the %s", i, where), AffectedFile: fmt.Sprintf("src/%s/f%d.go", dir, i%10), Verified: true}
	})
	for _, tc := range []struct {
		name  string
		f     Filter
		where string
		held  int // prefix paths held
		total int64
	}{
		{"other severities", Filter{FilePrefix: "src/web/", Text: "sql"}, `affected_file LIKE 'src/web/%' AND title ILIKE '%sql%'`, 0, 0},
		{"other severities with a state", Filter{FilePrefix: "src/web/", Text: "sql", State: "open"},
			`affected_file LIKE 'src/web/%' AND title ILIKE '%sql%' AND state = 'open'`, 0, 0},
		{"the paths of q's severities", Filter{FilePrefix: "src/", Text: "sql"}, `affected_file LIKE 'src/%' AND title ILIKE '%sql%'`, 5, 70},
		// q matches 70 descriptions, more than qSeverityKeysMax: their
		// severities are not read, and the prefix's paths are all held.
		{"a q of many texts", Filter{FilePrefix: "src/web/", Text: "query"}, `affected_file LIKE 'src/web/%' AND description ILIKE '%query%'`, 5, 0},
		{"a q of many texts, some in the prefix", Filter{FilePrefix: "src/", Text: "query"},
			`affected_file LIKE 'src/%' AND description ILIKE '%query%'`, 10, 70},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.OrgID, f.SortBy, f.Desc, f.Limit = u.org, "found_at", true, 100
			r, err := u.s.Resolve(u.ctx, f)
			require.NoError(t, err)
			require.NotNil(t, r.keys)
			assert.Len(t, r.keys.file, tc.held, "prefix paths held")
			assert.Equal(t, tc.total, u.listAgainstSQL(t, f, tc.where))
		})
	}
}

// listAgainstSQL checks f's first page (f.Limit findings, at least all of
// them) and its total against a plain query over the organization's
// findings with the conditions where, and returns the total.
func (u *unit) listAgainstSQL(t *testing.T, f Filter, where string) int64 {
	t.Helper()
	list, total, err := u.s.List(u.ctx, f)
	require.NoError(t, err)
	want := u.plainIDs(t, f, where)
	require.LessOrEqual(t, len(want), f.Limit, "matches within one page")
	got := make([]string, len(list))
	for i, fd := range list {
		got[i] = fd.ID
	}
	assert.Equal(t, int64(len(want)), total, "total against the plain query")
	assert.Equal(t, want, got, "page against the plain query")
	return total
}

// plainIDs returns the ids of the organization's findings with the
// conditions where, in f's order, from a plain query.
func (u *unit) plainIDs(t *testing.T, f Filter, where string) []string {
	t.Helper()
	var ids []string
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT coalesce(array_agg(id::text ORDER BY `+f.orderBy("f")+`), '{}')
		FROM findings.findings f WHERE org_id = $1 AND `+where, u.org).Scan(&ids))
	return ids
}
