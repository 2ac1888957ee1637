package store

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// TestTagTotalsFromCounters checks a tag's findings, within a scan, with
// a repository or a category, or alone (with the spec's severity and
// state): every page, in every order, against a plain query over the
// findings, after triage and a rescan moved the counters and a fold
// settled some of them; the total read from the tag counters alone; and a
// page nearer the end read from that end.
func TestTagTotalsFromCounters(t *testing.T) {
	u := newUnit(t)
	app := u.combinedFixture()
	var scan string
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT id::text FROM findings.scans WHERE org_id = $1 AND repo_key = $2`, u.org, app).Scan(&scan))
	// A rescan of the repository sees half of its findings again (an
	// occurrence of each, counted by the occurrence trigger) and a few new
	// ones (counted when their occurrence follows their tag rows).
	rescan := u.scan("https://git.example.com/acme/app")
	u.reportMany(rescan, 340, func(i int) Reported {
		fp := fmt.Sprintf("fp-0-%04d", 2*i)
		if i >= 300 {
			fp = fmt.Sprintf("fp-new-%04d", i)
		}
		return Reported{Fingerprint: fp, Title: "Open redirect", Severity: Severities[i%len(Severities)], Category: "xss",
			Description: "Redirect target from the query string.", AffectedFile: "src/web/redirect.go",
			Tags: []string{fmt.Sprintf("cwe-%d", i%4), "pci"}, Verified: true}
	})
	// Triage moves the counts of every scan of a finding between states.
	u.triageEvery(t, Filter{ScanID: rescan.ID}, 4)
	_, err := u.s.FoldCounts(u.ctx, 5)
	require.NoError(t, err)
	require.Zero(t, outOfSync(t, u.s.Pool), "copies and counters out of step with the findings")

	drivers := map[bool]bool{}
	inScan := func(id string) string {
		return ` AND id IN (SELECT finding_id FROM findings.occurrences WHERE scan_id = '` + id + `')`
	}
	for _, tc := range []struct {
		name       string
		f          Filter
		where      string // the filter in SQL, besides the tag
		counters   string // the counter table the total reads ("" for none)
		min        int
		scanDriven bool // the scan has fewer of the findings than the tag
	}{
		{"scan", Filter{ScanID: scan, Tag: "pci"}, inScan(scan), "finding_scan_tag_counts", 500, true},
		{"rescan", Filter{ScanID: rescan.ID, Tag: "cwe-2"}, inScan(rescan.ID), "finding_scan_tag_counts", 80, false},
		{"rescan_state", Filter{ScanID: rescan.ID, Tag: "pci", State: "resolved"}, inScan(rescan.ID) + ` AND state = 'resolved'`,
			"finding_scan_tag_counts", 20, true},
		{"scan_severity_state", Filter{ScanID: scan, Tag: "cwe-1", Severity: "high", State: "open"},
			inScan(scan) + ` AND severity = 'high' AND state = 'open'`, "finding_scan_tag_counts", 20, false},
		{"scan_unknown_severity", Filter{ScanID: scan, Tag: "pci", Severity: "urgent"}, ` AND false`, "", 0, false},
		{"scan_absent_tag", Filter{ScanID: scan, Tag: "cwe-99"}, inScan(scan), "finding_scan_tag_counts", 0, false},
		{"scan_category", Filter{ScanID: scan, Tag: "pci", Category: "xss"}, inScan(scan) + ` AND category = 'xss'`, "", 100, false},
		{"tag", Filter{Tag: "cwe-3"}, ``, "finding_tag_counts", 300, false},
		{"repository", Filter{Tag: "pci", RepoKey: app}, ` AND repo_key = '` + app + `'`, "finding_tag_search_counts", 600, false},
		{"category_state", Filter{Tag: "cwe-1", Category: "ssrf", State: "open"}, ` AND category = 'ssrf' AND state = 'open'`,
			"finding_tag_search_counts", 40, false},
		{"repository_category_severity", Filter{Tag: "pci", RepoKey: app, Category: "xss", Severity: "low"},
			` AND repo_key = '` + app + `' AND category = 'xss' AND severity = 'low'`, "finding_tag_search_counts", 30, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, counted := tc.f.tagCounters()
			require.Equal(t, tc.counters != "", counted, "counted")
			matches := u.checkEveryPage(t, tc.f, ` AND '`+tc.f.Tag+`' = ANY(tags)`+tc.where)
			require.GreaterOrEqual(t, matches, tc.min, "fixture matches")
			if tc.min == 0 {
				require.Zero(t, matches, "fixture matches")
			}
			if !counted {
				return
			}
			f := tc.f
			f.OrgID, f.SortBy, f.Desc, f.Limit = u.org, "found_at", true, 7
			_, _, count, countArgs := f.Queries()
			for _, mode := range planModes {
				p := u.prepare(t, mode, "tag_count_"+tc.name, "", count, countArgs...)
				assert.Equal(t, []string{tc.counters}, relations(p.Explain()), "%s: relations the total reads", mode)
			}
			total, err := u.s.Count(u.ctx, f)
			require.NoError(t, err)
			require.Equal(t, f.ScanID != "", f.tagPrecounted(), "page 1 counted first")
			if total == 0 {
				return
			}
			// The last page, as List reads it with the total known: from
			// the other end, with an offset below a page.
			f.Offset = int(total-1) / f.Limit * f.Limit
			require.True(t, f.tagPrecounted(), "a later page counted first")
			f.precount, f.precounted = total, true
			for _, scanDriven := range []bool{false, true} {
				if scanDriven && f.ScanID == "" {
					continue
				}
				f.scanDriven = scanDriven
				page, args, _, _ := f.Queries()
				limit, offset := innerLimitOffset(t, page, args)
				assert.Equal(t, int(total)-f.Offset, limit, "the last page's rows")
				assert.Zero(t, offset, "the last page read from the other end")
				assert.Equal(t, scanDriven, strings.Contains(page, "SELECT o.finding_id AS id"), "page read from the scan's occurrences")
			}
			// List reads a scan's page from the smaller side and, sorted by
			// severity, among the severities the page spans.
			f.precount, f.precounted = 0, false
			sized, n, err := f.tagSized(u.ctx, u.s.Pool)
			require.NoError(t, err)
			require.Equal(t, total, n)
			require.Equal(t, tc.scanDriven, sized.scanDriven, "page read from the scan's occurrences")
			if f.ScanID != "" {
				drivers[tc.scanDriven] = true
			}
			require.Zero(t, sized.rankHi, "found_at order: no rank bounds")
			if f.Severity == "" {
				f.SortBy, f.Offset = "severity", int(total/2)
				sized, _, err = f.tagSized(u.ctx, u.s.Pool)
				require.NoError(t, err)
				assert.NotZero(t, sized.rankHi, "severity order: the page's severities")
				assert.Less(t, sized.Offset, f.Offset, "severity order: the severities before the page skipped")
			}
		})
	}
	require.Len(t, drivers, 2, "both ways to a scan's page checked")
}

// triageEvery moves every nth of the findings f selects (up to 1,000, in
// found_at order) to another state, through the triage API.
func (u *unit) triageEvery(t *testing.T, f Filter, n int) {
	t.Helper()
	f.OrgID, f.SortBy, f.Limit = u.org, "found_at", 1000
	all, _, err := u.s.List(u.ctx, f)
	require.NoError(t, err)
	for i, fd := range all {
		state := []string{"resolved", "false_positive", "open"}[i%3]
		if i%n != 0 || state == fd.State {
			continue
		}
		_, err := u.s.Apply(u.ctx, u.org, fd.ID, Update{State: &state}, Actor{UserID: uuid.NewString(), Username: "ana", Source: "api"})
		require.NoError(t, err)
	}
}

// checkEveryPage checks every page of f (pages of 7 and of 100) in each
// order, both ways, against a plain query over the organization's approved
// findings with the conditions where, and returns the number of matches.
func (u *unit) checkEveryPage(t *testing.T, f Filter, where string) int {
	t.Helper()
	var n int
	for _, sortBy := range []string{"found_at", "severity", "updated_at"} {
		for _, desc := range []bool{true, false} {
			f.OrgID, f.SortBy, f.Desc = u.org, sortBy, desc
			want := u.plainIDs(t, f, `verification_status = 'approved'`+where)
			checkPages(t, u.s, f, want, []int{7, 100}, fmt.Sprintf("sort=%s desc=%t", sortBy, desc))
			n = len(want)
		}
	}
	return n
}

// relations returns the tables and indexes' tables a plan reads, sorted
// and without repeats.
func relations(plan map[string]any) []string {
	var out []string
	dbtest.EachNode(plan, func(node map[string]any) {
		if r, ok := node["Relation Name"].(string); ok && !slices.Contains(out, r) {
			out = append(out, r)
		}
	})
	slices.Sort(out)
	return out
}

// TestRankBand checks the severities a page sorted by severity spans,
// given the matches of each (critical first): the page's offset within
// them, and no severity without matches in the band, so that a page of
// one severity is read as one.
func TestRankBand(t *testing.T) {
	for _, tc := range []struct {
		name             string
		counts           []int64
		desc             bool
		offset, limit    int
		lo, hi, offsetIn int
	}{
		{"first severity", []int64{10, 10, 10, 10, 10}, true, 0, 5, 5, 5, 0},
		{"across two", []int64{10, 10, 10, 10, 10}, true, 8, 5, 4, 5, 8},
		{"second severity", []int64{10, 10, 10, 10, 10}, true, 12, 5, 4, 4, 2},
		{"ascending starts at info", []int64{10, 10, 10, 10, 10}, false, 12, 5, 2, 2, 2},
		{"last page before empty severities", []int64{0, 0, 250, 0, 0}, true, 240, 15, 3, 3, 240},
		{"last page after empty severities, ascending", []int64{0, 0, 250, 0, 0}, false, 240, 15, 3, 3, 240},
		{"empty severity between", []int64{5, 0, 5, 0, 0}, true, 3, 5, 3, 5, 3},
		{"past every match", []int64{1, 1, 1, 1, 1}, true, 5, 5, 0, 0, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Filter{SortBy: "severity", Desc: tc.desc, Offset: tc.offset, Limit: tc.limit}.rankBand(tc.counts)
			assert.Equal(t, []int{tc.lo, tc.hi, tc.offsetIn}, []int{f.rankLo, f.rankHi, f.Offset})
		})
	}
}

// TestCountedFirstPagesFromNearerEnd checks searches whose total is a
// count, not counters (within a scan, or with a tag and a filter the tag
// counters do not hold): past page 1 List counts them first (page 1 too
// for a tag with q read from the tag's rows, see countPrecounted), and a
// page nearer the end is read from there; every page, in every order,
// against a plain query over the findings.
func TestCountedFirstPagesFromNearerEnd(t *testing.T) {
	u := newUnit(t)
	app := u.combinedFixture()
	var scan string
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT id::text FROM findings.scans WHERE org_id = $1 AND repo_key = $2`, u.org, app).Scan(&scan))
	inScan := ` AND id IN (SELECT finding_id FROM findings.occurrences WHERE scan_id = '` + scan + `')`
	for _, tc := range []struct {
		name  string
		f     Filter
		where string // the filter in SQL
		first bool   // page 1 counted first too
	}{
		{"scan_category", Filter{ScanID: scan, Category: "xss"}, inScan + ` AND category = 'xss'`, false},
		{"scan_q", Filter{ScanID: scan, Text: "redirect"}, inScan + ` AND title ILIKE '%redirect%'`, false},
		{"scan_tag_category", Filter{ScanID: scan, Tag: "pci", Category: "ssrf"}, inScan + ` AND 'pci' = ANY(tags) AND category = 'ssrf'`, false},
		// A tag with q read from the tag's rows (see keyDriven).
		{"tag_q", Filter{Tag: "cwe-2", Text: "sink 1"}, ` AND 'cwe-2' = ANY(tags) AND description ILIKE '%sink 1%'`, true},
		// q checked on each of the prefix's index entries.
		{"prefix_q", Filter{FilePrefix: "src/web/", Text: "sink 1"}, ` AND affected_file LIKE 'src/web/%' AND description ILIKE '%sink 1%'`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Greater(t, u.checkEveryPage(t, tc.f, tc.where), 30, "fixture matches")
			f := tc.f
			f.OrgID, f.SortBy, f.Desc, f.Limit = u.org, "found_at", true, 7
			f, err := u.s.Resolve(u.ctx, f)
			require.NoError(t, err)
			require.Equal(t, tc.first, f.countPrecounted(), "page 1 counted first")
			total, err := u.s.Count(u.ctx, f)
			require.NoError(t, err)
			// The last page, resolved at its offset as List does.
			f.Offset = int(total-1) / f.Limit * f.Limit
			f.keys = nil
			f, err = u.s.Resolve(u.ctx, f)
			require.NoError(t, err)
			require.True(t, f.countPrecounted(), "a later page counted first")
			f.precount, f.precounted = total, true
			page, args, _, _ := f.Queries()
			limit, offset := innerLimitOffset(t, page, args)
			assert.Equal(t, int(total)-f.Offset, limit, "the last page's rows")
			assert.Zero(t, offset, "the last page read from the other end")
		})
	}
}

// TestTagPageOfFewMatches checks a tag's first page whose order's index
// would check a severity or found_at window row by row (see tagFenceable):
// its total is read first, an empty search reads no page, and a search of
// few matches reads them through the tag's range index instead of walking
// the tag's rows in update order past every other one. With a state
// besides, the page is walked as before; with a category the tag has no
// finding of, the counters say so and the walk never starts. Every page in
// every order equals a plain query.
func TestTagPageOfFewMatches(t *testing.T) {
	u := newUnit(t)
	sc := u.scan("https://git.example.com/acme/app")
	mk := func(prefix, severity, tag string) func(i int) Reported {
		return func(i int) Reported {
			return Reported{Fingerprint: fmt.Sprintf("%s-%04d", prefix, i), Title: "SQL injection", Category: "injection",
				Severity: severity, Description: "Query built from input.", AffectedFile: "src/db.go", Tags: []string{tag}, Verified: true}
		}
	}
	// The tag's few high findings first: they come last in update order,
	// newest first, after every low one. Another tag's high findings make
	// high findings common, as the planner sees the tag rows.
	u.reportMany(sc, 20, mk("high", "high", "cwe-89"))
	var between time.Time
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT clock_timestamp()`).Scan(&between))
	u.reportMany(sc, 600, mk("low", "low", "cwe-89"))
	u.reportMany(sc, 600, mk("other", "high", "cwe-79"))
	u.vacuumAllVisible("finding_tags")

	rec := &statements{}
	ts := &Store{Pool: tracedPool(t, u.s.Pool, rec, 0)}
	for _, tc := range []struct {
		name   string
		f      Filter
		where  string
		total  int64
		fenced bool // counted first, and cut from its matches
	}{
		{"severity", Filter{Tag: "cwe-89", Severity: "high"}, ` AND severity = 'high'`, 20, true},
		{"window", Filter{Tag: "cwe-89", FoundUntil: between}, ` AND found_at < '` + between.Format(time.RFC3339Nano) + `'`, 20, true},
		{"severity and state", Filter{Tag: "cwe-89", Severity: "high", State: "open"}, ` AND severity = 'high' AND state = 'open'`, 20, false},
		{"no match", Filter{Tag: "cwe-89", Severity: "critical"}, ` AND false`, 0, true},
		{"no match in the window", Filter{Tag: "cwe-89", Severity: "low", FoundUntil: between}, ` AND false`, 0, true},
		{"a category it has none of", Filter{Tag: "cwe-89", Category: "xss"}, ` AND false`, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, int(tc.total), u.checkEveryPage(t, tc.f, ` AND 'cwe-89' = ANY(tags)`+tc.where))
			f := tc.f
			f.OrgID, f.SortBy, f.Desc, f.Limit = u.org, "updated_at", true, 3
			require.Equal(t, tc.fenced, f.tagFenceable(), "fenceable")
			rec.reads()
			list, total, err := ts.List(u.ctx, f)
			require.NoError(t, err)
			require.Equal(t, tc.total, total)
			require.Len(t, list, min(3, int(tc.total)))
			// Counted first: the total, then the page unless the total
			// says it is empty. Otherwise the page and its total together.
			want := 2
			if tc.fenced && tc.total == 0 {
				want = 1
			}
			assert.Len(t, rec.reads(), want, "statements List ran")
			if tc.fenced && tc.total == 0 {
				return
			}
			// As List reads the page: with its total when counted first.
			f.precounted, f.precount = tc.fenced, total
			assert.Equal(t, tc.fenced, f.tagFenced(), "fenced")
			page, args, _, _ := f.Queries()
			for i, a := range args {
				if at, ok := a.(time.Time); ok {
					args[i] = at.Format(time.RFC3339Nano) // as the prepared statement's text argument
				}
			}
			for _, mode := range planModes {
				// A small fixture's table is cheaper to read whole: the
				// indexes are what a large one is read through.
				p := u.prepareWith(t, indexScansOnly, mode, "tag_few_"+strings.ReplaceAll(tc.name, " ", "_"), "", page, args...)
				read := dbtest.RowsRead(p.Explain(), "finding_tags", false)
				switch {
				case tc.fenced:
					assert.LessOrEqual(t, read, float64(total), "%s: tag rows the page read", mode)
				case total == 0:
					// The counters show no match: the walk never starts.
					assert.Zero(t, read, "%s: tag rows the page read", mode)
				default:
					assert.Greater(t, read, float64(100), "%s: the walk reads the low findings' rows", mode)
				}
			}
		})
	}
}

// innerLimitOffset returns the LIMIT and OFFSET of the inner query of
// page (see rowsPage): the LIMIT a parameter or, for a statement planned
// once, written into the statement (see plannedOnce).
func innerLimitOffset(t *testing.T, page string, args []any) (limit, offset int) {
	t.Helper()
	m := regexp.MustCompile(`LIMIT (\$?)(\d+) OFFSET \$(\d+)\)`).FindStringSubmatch(page)
	require.NotNil(t, m, page)
	limit, _ = strconv.Atoi(m[2])
	if m[1] == "$" {
		limit = args[limit-1].(int)
	}
	p, _ := strconv.Atoi(m[3])
	return limit, args[p-1].(int)
}
