package store

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// textFixture reports 160 findings whose descriptions mostly hold "sink"
// (so that a search for it holds the descriptions as their complement),
// titles of a few rules, some not ASCII, and paths in two directories.
func (u *unit) textFixture(prefix string, n int) {
	u.t.Helper()
	sc := u.scan("https://git.example.com/acme/" + prefix)
	u.reportMany(sc, n, func(i int) Reported {
		r := reportedFP(fmt.Sprintf("%s-%03d", prefix, i))
		r.Severity = Severities[i%len(Severities)]
		r.Verified = i%9 != 4
		r.Title = []string{"SQL Injection", "Path traversal", "Écriture hors limites", "Open redirect"}[i%4]
		r.Description = fmt.Sprintf("Tainted data reaches Sink%d_x%%y", i)
		if i%10 == 3 {
			r.Description = fmt.Sprintf("Source %d ÜBER alles", i)
		}
		r.AffectedFile = fmt.Sprintf("src/%s/%s/f%d.go", prefix, []string{"Web", "db"}[i%2], i%40)
		return r
	})
}

// copiedUnit is a unit whose store keeps copies of the texts, with n
// findings of textFixture and their texts copied.
func copiedUnit(t *testing.T, n int) (*unit, *textCache) {
	t.Helper()
	u := newUnit(t)
	u.s.TextCopies = true
	u.textFixture("a", n)
	cache := u.s.textCache()
	require.NoError(t, cache.refresh(u.ctx, u.org))
	return u, cache
}

// textCases are searches whose q is ASCII (matched against the copy) or
// not (matched by the server), with the conditions in SQL that select the
// same findings.
var textCases = []struct {
	q     string
	where string
	ascii bool
}{
	{"sink", `(title ILIKE '%sink%' OR description ILIKE '%sink%' OR affected_file ILIKE '%sink%')`, true},
	{"SINK1", `(title ILIKE '%sink1%' OR description ILIKE '%sink1%' OR affected_file ILIKE '%sink1%')`, true},
	{"_x%y", `(description LIKE '%\_x\%y%')`, true},
	{"src/", `true`, true},
	{"/web/", `affected_file ILIKE '%/web/%'`, true},
	{"injection", `title ILIKE '%injection%'`, true},
	{"hors", `title ILIKE '%hors%'`, true},
	{"nowhere", `false`, true},
	{"x", `(title ILIKE '%x%' OR description ILIKE '%x%' OR affected_file ILIKE '%x%')`, true},
	{"über", `description ILIKE '%über%'`, false},
	{"écriture", `title ILIKE '%écriture%'`, false},
}

// TestTextCacheMatchesAsTheServer: a q matched against the store's copy
// of the organization's texts finds the keys, complements and counts the
// server's trigram lookup finds, and the same pages and totals; a q that
// is not ASCII is left to the server. Without the copy's keys sent, the
// statement would find nothing, so a copy used wrongly fails the plain
// query comparison.
func TestTextCacheMatchesAsTheServer(t *testing.T) {
	u, cache := copiedUnit(t, 160)
	require.NotNil(t, cache.lookup(u.org), "the organization's texts are copied")
	for _, tc := range textCases {
		for _, complements := range []bool{true, false} {
			f := Filter{OrgID: u.org, Text: tc.q, Limit: 200}
			server, err := matchKeys(u.ctx, u.s.Pool, f, complements)
			require.NoError(t, err)
			require.False(t, server.textsCurrent)
			f.texts = cache
			copied, err := matchKeys(u.ctx, u.s.Pool, f, complements)
			require.NoError(t, err)
			assert.Equal(t, tc.ascii, copied.textsCurrent, "q %q matched against the copy", tc.q)
			sameMatches(t, tc.q, server, copied)
		}
		u.checkTextSearch(t, tc.q, tc.where)
	}
}

// sameMatches compares two key lookups, whatever the order of their keys.
func sameMatches(t *testing.T, q string, want, got matched) {
	t.Helper()
	norm := func(m matched) matched {
		m.textsCurrent = false
		for i, keys := range [][]string{m.title, m.description, m.file} {
			idx := make([]int, len(keys))
			for j := range idx {
				idx[j] = j
			}
			slices.SortFunc(idx, func(a, b int) int { return cmpStrings(keys[a], keys[b]) })
			sorted := make([]string, len(keys))
			var counts []int64
			var sevs [][]int64
			for j, k := range idx {
				sorted[j] = keys[k]
				if len(m.counts[i]) > 0 {
					counts = append(counts, m.counts[i][k])
				}
				if len(m.severities[i]) > 0 {
					sevs = append(sevs, m.severities[i][k])
				}
			}
			if len(m.counts[i]) > 0 {
				m.counts[i] = counts
			}
			if len(m.severities[i]) > 0 {
				m.severities[i] = sevs
			}
			switch i {
			case 0:
				m.title = sorted
			case 1:
				m.description = sorted
			default:
				m.file = sorted
			}
		}
		return m
	}
	assert.Equal(t, norm(want), norm(got), "q %q", q)
}

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkTextSearch checks q's pages and totals, in two orders and with a
// state, against plain queries.
func (u *unit) checkTextSearch(t *testing.T, q, where string) {
	t.Helper()
	for _, f := range []Filter{
		{OrgID: u.org, Text: q, Limit: 400},
		{OrgID: u.org, Text: q, Limit: 400, SortBy: "severity", Desc: true},
		{OrgID: u.org, Text: q, Limit: 400, State: "open", Severity: "high"},
	} {
		cond := `verification_status = 'approved' AND ` + where
		if f.State != "" {
			cond += ` AND state = 'open' AND severity = 'high'`
		}
		u.listAgainstSQL(t, f, cond)
		n, err := u.s.Count(u.ctx, f)
		require.NoError(t, err)
		assert.Equal(t, int64(len(u.plainIDs(t, f, cond))), n, "count of q %q", q)
	}
}

// TestTextCacheStaleCopy: once new texts are reported, the copy no longer
// matches the organization's text counts; the statement then matches q
// through the trigram indexes (new texts found), and the next searches
// have the copy refreshed in the background.
func TestTextCacheStaleCopy(t *testing.T) {
	u, cache := copiedUnit(t, 120)
	u.textFixture("b", 40) // new descriptions, paths and no new title
	// No refresh until the stale copy's searches are checked.
	holdRefresh := func(until time.Time) {
		cache.mu.Lock()
		cache.next[u.org] = until
		cache.mu.Unlock()
	}
	holdRefresh(time.Now().Add(time.Hour))
	f := Filter{OrgID: u.org, Text: "sink", Limit: 200, texts: cache}
	m, err := matchKeys(u.ctx, u.s.Pool, f, true)
	require.NoError(t, err)
	require.False(t, m.textsCurrent, "the copy misses the new texts")
	// Beside a prefix, q's keys are then the server's.
	prefixed := Filter{OrgID: u.org, FilePrefix: "src/b/", Text: "sink", Limit: 200, texts: cache}
	r, err := u.s.Resolve(u.ctx, prefixed)
	require.NoError(t, err)
	require.Nil(t, r.qKeys, "q's keys beside a prefix from a stale copy")
	var scan string
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT id::text FROM findings.scans WHERE org_id = $1 AND repo_url LIKE '%/b'`, u.org).Scan(&scan))
	check := func() {
		for _, tc := range textCases {
			u.checkTextSearch(t, tc.q, tc.where)
			u.checkPrefixTextSearch(t, "src/b/", tc.q, `starts_with(affected_file, 'src/b/') AND `+tc.where, scan)
		}
	}
	check()
	holdRefresh(time.Time{})
	require.Eventually(t, func() bool {
		m, err := matchKeys(u.ctx, u.s.Pool, f, true)
		return err == nil && m.textsCurrent
	}, 20*time.Second, 50*time.Millisecond, "a stale copy is refreshed")
	r, err = u.s.Resolve(u.ctx, prefixed)
	require.NoError(t, err)
	require.NotNil(t, r.qKeys, "q's keys beside a prefix from the refreshed copy")
	check()
}

// TestTextCacheBounds: an organization with more texts than the bound is
// not copied, and copies beyond the byte budget push out the least
// recently used.
func TestTextCacheBounds(t *testing.T) {
	u := newUnit(t)
	u.textFixture("a", 60)
	other := &unit{t: t, ctx: u.ctx, s: u.s, org: "00000000-0000-4000-8000-000000000001"}
	other.textFixture("b", 60)

	small := newTextCache(u.s.Pool)
	small.maxTexts = 20
	require.NoError(t, small.refresh(u.ctx, u.org))
	require.Nil(t, small.lookup(u.org), "more texts than the bound")

	c := newTextCache(u.s.Pool)
	require.NoError(t, c.refresh(u.ctx, u.org))
	a := c.lookup(u.org)
	require.NotNil(t, a)
	c.maxBytes = a.bytes + a.bytes/2 // room for one organization's texts
	require.NoError(t, c.refresh(u.ctx, other.org))
	require.Nil(t, c.lookup(u.org), "the least recently used copy leaves")
	require.NotNil(t, c.lookup(other.org))
	require.LessOrEqual(t, c.bytes, c.maxBytes)

	// The memo of q's hits stays within its bounds, and remembers what
	// a search finds.
	b := c.lookup(other.org)
	want := [3][]int{b.hits(0, "sql"), b.hits(1, "sql"), b.hits(2, "sql")}
	require.Equal(t, want, b.match("sql"))
	for i := range 3 * textMemoMax {
		b.match(fmt.Sprintf("sink%d", i%70))
		b.match("src/")
		require.LessOrEqual(t, len(b.memo), textMemoMax)
		require.LessOrEqual(t, int64(b.memoHits), textMemoHits*(b.n[0]+b.n[1]+b.n[2]))
	}
	require.Equal(t, want, b.match("sql"))
}

// TestOrgTextsHits: a q is found in each text that contains it, once per
// text however often, at either end of the column, never across two texts,
// and only ASCII q's without NUL are lowered in the process.
func TestOrgTextsHits(t *testing.T) {
	texts := []string{"abc", "xabcabc", "", "ab", "cab", "zzabc"}
	o := &orgTexts{}
	var buf string
	for _, s := range texts {
		buf += s
		o.ends[1] = append(o.ends[1], len(buf))
		buf += "\x00"
	}
	o.buf[1] = buf
	for _, tc := range []struct {
		q    string
		want []int
	}{
		{"abc", []int{0, 1, 5}},
		{"ab", []int{0, 1, 3, 4, 5}},
		{"b", []int{0, 1, 3, 4, 5}},
		{"cab", []int{1, 4}},
		{"bca", []int{1}},
		{"cx", nil}, // "abc" then "xabcabc": across two texts
		{"abcab", []int{1}},
		{"zzabc", []int{5}},
		{"q", nil},
	} {
		assert.Equal(t, tc.want, o.hits(1, tc.q), "q %q", tc.q)
		assert.Empty(t, o.hits(0, tc.q), "an empty column")
	}
	for _, tc := range []struct {
		q, want string
		ok      bool
	}{
		{"SQL Injection", "sql injection", true},
		{"a_%\\B", "a_%\\b", true},
		{"Über", "", false},
		{"a\x00b", "", false},
	} {
		got, ok := asciiLower(tc.q)
		assert.Equal(t, tc.ok, ok, tc.q)
		assert.Equal(t, tc.want, got, tc.q)
	}
}

// prefixTextCases are file prefixes of textFixture's paths, with the
// conditions in SQL that select the same findings.
var prefixTextCases = []struct{ prefix, where string }{
	{"src/a/Web/", `starts_with(affected_file, 'src/a/Web/')`},
	{"src/", `starts_with(affected_file, 'src/')`},
	{"src/a/db/f1", `starts_with(affected_file, 'src/a/db/f1')`},
}

// TestTextCachePrefixQ: q beside a file prefix takes q's keys from the
// store's copy of the organization's texts when the key lookup finds it
// current, and its pages and totals then test them on the prefix's rows
// without matching q on the server; a q that matches every text of a
// column leaves the prefix's search alone; a q that is not ASCII is still
// matched by the server. Every page and total, across the organization,
// within a scan and with a tag, in three orders and with a state, is the
// plain query's.
func TestTextCachePrefixQ(t *testing.T) {
	u, cache := copiedUnit(t, 160)
	var scan string
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT id::text FROM findings.scans WHERE org_id = $1`, u.org).Scan(&scan))
	for _, pc := range prefixTextCases {
		for _, tc := range textCases {
			f := Filter{OrgID: u.org, FilePrefix: pc.prefix, Text: tc.q, Limit: 400, texts: cache}
			r, err := u.s.Resolve(u.ctx, f)
			require.NoError(t, err)
			switch {
			case !tc.ascii:
				assert.Nil(t, r.qKeys, "q %q is matched by the server", tc.q)
			case r.Text == "":
				assert.True(t, cache.lookup(u.org).qKeys(tc.q).everything(), "q %q dropped though not in every text of a column", tc.q)
			default:
				require.NotNil(t, r.qKeys, "q %q beside %q takes its keys from the copy", tc.q, pc.prefix)
				if r.keys.hits > 0 {
					page, _, total, _ := r.Queries()
					assert.NotContains(t, page+total, "search_texts", "q %q is not matched on the server", tc.q)
				}
			}
			u.checkPrefixTextSearch(t, pc.prefix, tc.q, pc.where+` AND `+tc.where, scan)
		}
	}
}

// checkPrefixTextSearch checks the pages (of seven) and totals of q beside
// the file prefix, across the organization, within scan and with a tag, in
// three orders and with a state, against plain queries.
func (u *unit) checkPrefixTextSearch(t *testing.T, prefix, q, where, scan string) {
	t.Helper()
	for _, f := range []Filter{
		{OrgID: u.org, FilePrefix: prefix, Text: q},
		{OrgID: u.org, FilePrefix: prefix, Text: q, SortBy: "severity", Desc: true},
		{OrgID: u.org, FilePrefix: prefix, Text: q, SortBy: "updated_at"},
		{OrgID: u.org, FilePrefix: prefix, Text: q, State: "open"},
		{OrgID: u.org, FilePrefix: prefix, Text: q, ScanID: scan, Desc: true},
		{OrgID: u.org, FilePrefix: prefix, Text: q, Tag: "t", SortBy: "severity"},
	} {
		cond := `verification_status = 'approved' AND ` + where
		if f.State != "" {
			cond += ` AND state = 'open'`
		}
		if f.Tag != "" {
			cond += ` AND '` + f.Tag + `' = ANY (tags)`
		}
		if f.ScanID != "" {
			cond += ` AND EXISTS (SELECT 1 FROM findings.occurrences o WHERE o.finding_id = f.id AND o.scan_id = '` + f.ScanID + `')`
		}
		want := u.plainIDs(t, f, cond)
		n, err := u.s.Count(u.ctx, f)
		require.NoError(t, err)
		assert.Equal(t, int64(len(want)), n, "count of q %q beside %q", q, prefix)
		f.Limit = 7
		for f.Offset = 0; f.Offset == 0 || f.Offset < len(want); f.Offset += f.Limit {
			list, total, err := u.s.List(u.ctx, f)
			require.NoError(t, err)
			got := make([]string, len(list))
			for i, fd := range list {
				got[i] = fd.ID
			}
			end := min(f.Offset+f.Limit, len(want))
			assert.Equal(t, want[min(f.Offset, end):end], got, "page at %d of q %q beside %q (%+v)", f.Offset, q, prefix, f)
			assert.Equal(t, int64(len(want)), total, "total of q %q beside %q", q, prefix)
		}
	}
}
