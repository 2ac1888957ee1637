package e2e

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// searchFixture is an organization with two repositories' findings of known
// category, tags, file, texts and found_at, and another organization that
// reported the same findings in the same repository.
type searchFixture struct {
	read, write string
	foreignRead string
	shop, lib   string // scans
	foreignScan string
	byFP        map[string]string // fingerprint → id
	rows        []searchRow
	foreignIDs  []string
	day0        time.Time
}

type searchRow struct {
	id, fp, repo, category, file, title, desc, severity string
	tags                                                []string
	foundAt                                             time.Time
}

func seedSearch(t *testing.T) searchFixture {
	t.Helper()
	o := newOrg(t, "auto")
	foreign := newOrg(t, "auto")
	fx := searchFixture{read: o.ReadKey, write: o.WriteKey, foreignRead: foreign.ReadKey, byFP: map[string]string{},
		day0: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	fx.shop = newScan(t, o, "https://git.example.com/acme/shop")
	fx.lib = newScan(t, o, "https://git.example.com/acme/lib.git")
	fx.foreignScan = newScan(t, foreign, "https://git.example.com/acme/shop")
	files := []string{"src/a_b.go", "src/axb.go", "src/100%/pay.go", "src/db/query.go", "web/SRC/x.js", "lib/util.py"}
	titles := []string{"SQL injection in order lookup", "Reflected XSS in search page", "Hard-coded AWS secret", "Path traversal in download"}
	cats := []string{"injection", "xss", "secrets", "path_traversal"}
	build := func(i int, repo string) (*findingsv1.ReportedFinding, searchRow) {
		f := fnd(fmt.Sprintf("s-%s-%d", repo, i), severities[i%5])
		f.Title = fmt.Sprintf("%s #%d", titles[i%4], i)
		f.Category = cats[i%4]
		f.AffectedFile = files[i%len(files)]
		f.Description = fmt.Sprintf("Rule R%d: 50%% of callers pass user_input unchecked", i%3)
		f.Tags = []string{fmt.Sprintf("cwe-%d", 20+i%3)}
		if i%4 == 0 {
			f.Tags = append(f.Tags, "pci")
		}
		return f, searchRow{fp: f.Fingerprint, repo: repo, category: f.Category, file: f.AffectedFile, title: f.Title,
			desc: f.Description, severity: f.Severity, tags: f.Tags}
	}
	for _, sc := range []struct{ id, repo string }{{fx.shop, "shop"}, {fx.lib, "lib"}} {
		var fs []*findingsv1.ReportedFinding
		var rows []searchRow
		for i := range 12 {
			f, row := build(i, sc.repo)
			fs = append(fs, f)
			rows = append(rows, row)
		}
		for i, id := range report(t, sc.id, fs...) {
			rows[i].id = id
			fx.byFP[rows[i].fp] = id
		}
		fx.rows = append(fx.rows, rows...)
	}
	var fs []*findingsv1.ReportedFinding
	for i := range 12 {
		f, _ := build(i, "shop")
		fs = append(fs, f)
	}
	fx.foreignIDs = report(t, fx.foreignScan, fs...)
	// found_at: one finding a day, both organizations alike.
	for i := range fx.rows {
		fx.rows[i].foundAt = fx.day0.Add(time.Duration(i) * 24 * time.Hour)
		_, err := pool.Exec(ctx(t), `UPDATE findings.findings SET found_at = $2 WHERE id = $1`, fx.rows[i].id, fx.rows[i].foundAt)
		require.NoError(t, err)
		if i < len(fx.foreignIDs) {
			_, err = pool.Exec(ctx(t), `UPDATE findings.findings SET found_at = $2 WHERE id = $1`, fx.foreignIDs[i], fx.rows[i].foundAt)
			require.NoError(t, err)
		}
	}
	return fx
}

// want returns the ids of the fixture's rows keep selects, newest first (the
// default order).
func (fx searchFixture) want(keep func(searchRow) bool) []string {
	out := []string{}
	for i := len(fx.rows) - 1; i >= 0; i-- {
		if keep(fx.rows[i]) {
			out = append(out, fx.rows[i].id)
		}
	}
	return out
}

func TestSearchFilters(t *testing.T) {
	t.Parallel()
	fx := seedSearch(t)
	day := func(n int) string { return fx.day0.Add(time.Duration(n) * 24 * time.Hour).Format(time.RFC3339) }
	lc := strings.ToLower
	text := func(r searchRow, q string) bool {
		return strings.Contains(lc(r.title), lc(q)) || strings.Contains(lc(r.desc), lc(q)) || strings.Contains(lc(r.file), lc(q))
	}
	cases := []struct {
		name  string
		query url.Values
		keep  func(searchRow) bool
		min   int
	}{
		{"found_since", url.Values{"found_since": {day(15)}}, func(r searchRow) bool { return !r.foundAt.Before(fx.day0.AddDate(0, 0, 15)) }, 9},
		{"found_until is exclusive", url.Values{"found_until": {day(5)}}, func(r searchRow) bool { return r.foundAt.Before(fx.day0.AddDate(0, 0, 5)) }, 5},
		{"severity since a date", url.Values{"found_since": {day(10)}, "severity": {"high"}}, func(r searchRow) bool {
			return !r.foundAt.Before(fx.day0.AddDate(0, 0, 10)) && r.severity == "high"
		}, 1},
		{"state until a date", url.Values{"found_until": {day(20)}, "state": {"open"}}, func(r searchRow) bool { return r.foundAt.Before(fx.day0.AddDate(0, 0, 20)) }, 10},
		{"window with offsets", url.Values{"found_since": {fx.day0.AddDate(0, 0, 3).In(time.FixedZone("", 2*3600)).Format(time.RFC3339)},
			"found_until": {day(7)}}, func(r searchRow) bool {
			return !r.foundAt.Before(fx.day0.AddDate(0, 0, 3)) && r.foundAt.Before(fx.day0.AddDate(0, 0, 7))
		}, 4},
		{"repo_url normalized", url.Values{"repo_url": {"HTTPS://Git.Example.com/acme/lib/"}}, func(r searchRow) bool { return r.repo == "lib" }, 12},
		{"repo_url with .git", url.Values{"repo_url": {"https://git.example.com/acme/shop.git"}}, func(r searchRow) bool { return r.repo == "shop" }, 12},
		{"category", url.Values{"category": {"xss"}}, func(r searchRow) bool { return r.category == "xss" }, 6},
		{"tag", url.Values{"tag": {"pci"}}, func(r searchRow) bool { return slices.Contains(r.tags, "pci") }, 6},
		{"tag is exact", url.Values{"tag": {"cwe-2"}}, func(searchRow) bool { return false }, 0},
		{"affected_file prefix", url.Values{"affected_file": {"src/"}}, func(r searchRow) bool { return strings.HasPrefix(r.file, "src/") }, 12},
		{"affected_file underscore is literal", url.Values{"affected_file": {"src/a_"}}, func(r searchRow) bool { return r.file == "src/a_b.go" }, 4},
		{"affected_file percent is literal", url.Values{"affected_file": {"src/100%"}}, func(r searchRow) bool { return r.file == "src/100%/pay.go" }, 4},
		{"affected_file is a prefix, not a substring", url.Values{"affected_file": {"SRC/"}}, func(searchRow) bool { return false }, 0},
		{"q in title ignoring case", url.Values{"q": {"sql INJECTION"}}, func(r searchRow) bool { return text(r, "sql injection") }, 6},
		{"q in description with metacharacters", url.Values{"q": {"50% of callers pass user_"}}, func(r searchRow) bool { return true }, 24},
		{"q underscore is literal", url.Values{"q": {"a_b"}}, func(r searchRow) bool { return r.file == "src/a_b.go" }, 4},
		{"q in file", url.Values{"q": {"query.go"}}, func(r searchRow) bool { return r.file == "src/db/query.go" }, 4},
		{"q matches nothing", url.Values{"q": {"user%input"}}, func(searchRow) bool { return false }, 0},
		{"all combined by AND", url.Values{"repo_url": {"https://git.example.com/acme/shop"}, "category": {"injection"}, "tag": {"pci"},
			"affected_file": {"src/"}, "q": {"order"}, "found_since": {day(0)}, "found_until": {day(30)}, "severity": {"critical"}, "state": {"open"}},
			func(r searchRow) bool {
				return r.repo == "shop" && r.category == "injection" && slices.Contains(r.tags, "pci") && strings.HasPrefix(r.file, "src/") &&
					text(r, "order") && r.severity == "critical"
			}, 1},
		{"with severity", url.Values{"tag": {"cwe-21"}, "severity": {"high"}}, func(r searchRow) bool {
			return slices.Contains(r.tags, "cwe-21") && r.severity == "high"
		}, 1},
		{"with scan_id", url.Values{"scan_id": {fx.lib}, "category": {"secrets"}}, func(r searchRow) bool { return r.repo == "lib" && r.category == "secrets" }, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := fx.want(tc.keep)
			require.GreaterOrEqual(t, len(want), tc.min)
			if tc.min == 0 {
				require.Empty(t, want, "fixture")
			}
			q := url.Values{}
			for k, v := range tc.query {
				q[k] = v
			}
			q.Set("limit", "100")
			l := list(t, fx.read, "/findings?"+q.Encode())
			require.Equal(t, want, ids(l), "GET /findings?%s", q.Encode())
			require.Equal(t, len(want), l.Total)
			// Pages of 5 give the same sequence and the same total.
			paged := []string{}
			for page := 1; page == 1 || len(paged) < len(want); page++ {
				q.Set("limit", "5")
				q.Set("page", fmt.Sprint(page))
				l := list(t, fx.read, "/findings?"+q.Encode())
				require.Equal(t, len(want), l.Total)
				require.Equal(t, page, l.Page)
				if len(l.Data) == 0 {
					break
				}
				paged = append(paged, ids(l)...)
			}
			require.Equal(t, want, paged)
		})
	}

	t.Run("scan list and export", func(t *testing.T) {
		q := url.Values{"tag": {"pci"}, "q": {"sql"}}
		want := fx.want(func(r searchRow) bool { return r.repo == "shop" && slices.Contains(r.tags, "pci") && text(r, "sql") })
		require.NotEmpty(t, want)
		l := list(t, fx.read, "/scans/"+fx.shop+"/findings?"+q.Encode())
		require.Equal(t, want, ids(l))
		require.Equal(t, len(want), l.Total)

		r := do(t, "GET", "/scans/"+fx.shop+"/findings/export?"+q.Encode(), fx.read, nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		var arr []map[string]any
		require.NoError(t, json.Unmarshal(r.Body, &arr))
		var got []string
		for _, f := range arr {
			got = append(got, f["id"].(string))
		}
		require.Equal(t, want, got)

		q.Set("format", "csv")
		r = do(t, "GET", "/scans/"+fx.shop+"/findings/export?"+q.Encode(), fx.read, nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
		require.NoError(t, err)
		require.Len(t, recs, len(want)+1)
		idCol := slices.Index(recs[0], "id")
		require.GreaterOrEqual(t, idCol, 0)
		got = got[:0]
		for _, rec := range recs[1:] {
			got = append(got, rec[idCol])
		}
		require.Equal(t, want, got)

		q.Set("format", "sarif")
		r = do(t, "GET", "/scans/"+fx.shop+"/findings/export?"+q.Encode(), fx.read, nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		var sarif struct {
			Runs []struct {
				Results []map[string]any `json:"results"`
			} `json:"runs"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &sarif))
		require.Len(t, sarif.Runs, 1)
		require.Len(t, sarif.Runs[0].Results, len(want))
	})

	t.Run("foreign findings never appear", func(t *testing.T) {
		for _, q := range []url.Values{
			{"repo_url": {"https://git.example.com/acme/shop"}},
			{"q": {"injection"}},
			{"tag": {"pci"}},
			{"affected_file": {"src/"}},
			{"found_since": {day(0)}},
			{"category": {"xss"}},
		} {
			q.Set("limit", "100")
			l := list(t, fx.read, "/findings?"+q.Encode())
			require.NotEmpty(t, l.Data, "%s", q.Encode())
			for _, id := range ids(l) {
				require.NotContains(t, fx.foreignIDs, id, "%s", q.Encode())
			}
			fl := list(t, fx.foreignRead, "/findings?"+q.Encode())
			require.NotEmpty(t, fl.Data, "%s", q.Encode())
			for _, id := range ids(fl) {
				require.Contains(t, fx.foreignIDs, id, "%s", q.Encode())
			}
			require.Equal(t, len(fl.Data), fl.Total)
		}
		// Another organization's scan stays a 404 with search filters.
		requireError(t, do(t, "GET", "/scans/"+fx.foreignScan+"/findings?q=sql", fx.read, nil), 404, "")
		requireError(t, do(t, "GET", "/scans/"+fx.foreignScan+"/findings/export?tag=pci", fx.read, nil), 404, "")
	})

	t.Run("bulk filter", func(t *testing.T) {
		body := map[string]any{"filter": map[string]any{"repo_url": "https://git.example.com/acme/lib", "tag": "pci", "q": "ORDER lookup"},
			"state": "accepted_risk", "reason": "rotated"}
		want := fx.want(func(r searchRow) bool {
			return r.repo == "lib" && slices.Contains(r.tags, "pci") && text(r, "order lookup")
		})
		require.NotEmpty(t, want)
		r := do(t, "POST", "/findings/bulk", fx.write, body)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.EqualValues(t, len(want), r.JSON()["matched"])
		l := list(t, fx.read, "/findings?state=accepted_risk&limit=100")
		require.ElementsMatch(t, want, ids(l))
		requireError(t, do(t, "POST", "/findings/bulk", fx.write, map[string]any{"filter": map[string]any{"found_since": "yesterday"},
			"state": "resolved"}), 400, "filter.found_since must be an RFC 3339 time")
		requireError(t, do(t, "POST", "/findings/bulk", fx.write, map[string]any{"filter": map[string]any{"category": "nope"},
			"state": "resolved"}), 400, "filter.category must be one of")
	})
}

func TestSearchFilterErrors(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	scan := newScan(t, o, "https://git.example.com/acme/errs")
	report(t, scan, fnd("e1", "high"))
	long := strings.Repeat("x", 201)
	cases := []struct {
		query, msg string
	}{
		{"found_since=2026-02-30", "found_since must be an RFC 3339 time"},
		{"found_since=yesterday", "found_since must be an RFC 3339 time"},
		{"found_until=2026-01-01T00:00:00", "found_until must be an RFC 3339 time"},
		{"found_since=2026-02-02T00:00:00Z&found_until=2026-02-01T00:00:00Z", "found_since must not be after found_until"},
		{"category=sqli", "category must be one of: injection"},
		{"q=" + long, "q must be at most 200 characters"},
		{"q=a%0Ab", "q must not contain control characters"},
		{"q=%20%20", "q must not be only spaces"},
		{"tag=" + strings.Repeat("t", 201), "tag must be at most 200 characters"},
		{"affected_file=" + strings.Repeat("f", 1025), "affected_file must be at most 1024 characters"},
		{"affected_file=a%01b", "affected_file must not contain control characters"},
		{"affected_file=a%00b", "affected_file must not contain the NUL character (U+0000)"},
		{"q=caf%E9", "q must be valid UTF-8"},
		{"repo_url=" + strings.Repeat("r", 2049), "repo_url must be at most 2048 characters"},
	}
	for _, tc := range cases {
		for _, path := range []string{"/findings?", "/scans/" + scan + "/findings?", "/scans/" + scan + "/findings/export?"} {
			requireError(t, do(t, "GET", path+tc.query, o.ReadKey, nil), 400, tc.msg)
		}
	}
	// A window of no width is valid and empty.
	l := list(t, o.ReadKey, "/findings?found_since=2026-02-01T00:00:00Z&found_until=2026-02-01T00:00:00Z")
	require.Empty(t, l.Data)
	require.Zero(t, l.Total)
}
