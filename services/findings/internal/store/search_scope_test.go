package store

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeySearchTotalsWithinRepoAndCategory checks q and file prefix
// searches with a repository and/or a category (with the spec's severity
// and state): every page, in every order, against a plain query over the
// findings, after triage and a change of category moved the counters and a
// fold settled some of them; the total taken from the key search counters
// (finding_key_search_counts) as Resolve read them, so that no statement
// counts the matches; a page nearer the end read from that end; and a
// page sorted by severity found among the severities it spans.
func TestKeySearchTotalsWithinRepoAndCategory(t *testing.T) {
	u := newUnit(t)
	app := u.combinedFixture()
	lib := Scan{RepoURL: "https://git.example.com/acme/lib"}.repoKey()
	// Triage moves findings between states, and a finding moved to
	// another category moves its keys' counts with it.
	u.triageEvery(t, Filter{RepoKey: app}, 5)
	_, err := u.s.Pool.Exec(u.ctx, `UPDATE findings.findings SET category = 'auth' WHERE org_id = $1 AND repo_key = $2 AND right(fingerprint, 1) IN ('1', '2', '7')`,
		u.org, lib)
	require.NoError(t, err)
	_, err = u.s.FoldCounts(u.ctx, 7)
	require.NoError(t, err)
	require.Zero(t, outOfSync(t, u.s.Pool), "copies and counters out of step with the findings")

	for _, tc := range []struct {
		name  string
		f     Filter
		where string // the filter in SQL
		min   int
		// one: the matches go through one column, whose counters give the
		// total; otherwise they are counted.
		one bool
		// complement: Resolve counts the files' keys as their complement.
		complement bool
	}{
		{"title_repository", Filter{Text: "injection", RepoKey: app}, `title ILIKE '%injection%' AND repo_key = '` + app + `'`, 70, true, false},
		{"prefix_category", Filter{FilePrefix: "src/api/", Category: "xss"}, `affected_file LIKE 'src/api/%' AND category = 'xss'`, 50, true, false},
		{"prefix_repository_severity", Filter{FilePrefix: "src/web/file1", RepoKey: lib, Severity: "medium"},
			`affected_file LIKE 'src/web/file1%' AND repo_key = '` + lib + `' AND severity = 'medium'`, 5, true, false},
		{"descriptions_repository_category_state", Filter{Text: "sink 1", RepoKey: app, Category: "injection", State: "open"},
			`description ILIKE '%sink 1%' AND repo_key = '` + app + `' AND category = 'injection' AND state = 'open'`, 10, true, false},
		{"moved_category", Filter{Text: "sink", Category: "auth"}, `description ILIKE '%sink%' AND category = 'auth'`, 50, true, false},
		// Almost every path holds "file": the files' keys are held as
		// their complement, counted against the category's findings.
		{"complement_category", Filter{Text: "file", Category: "ssrf"},
			`affected_file ILIKE '%file%' AND category = 'ssrf'`, 200, true, true},
		{"complement_repository_state", Filter{Text: "file", RepoKey: lib, State: "open"},
			`affected_file ILIKE '%file%' AND repo_key = '` + lib + `' AND state = 'open'`, 20, true, true},
		{"absent_from_repository", Filter{Text: "redirect", RepoKey: Scan{RepoURL: "https://git.example.com/acme/large"}.repoKey()},
			`false`, 0, true, false},
		// Titles and descriptions both hold "in": counted from the union.
		{"two_columns_category", Filter{Text: "in", Category: "xss"},
			`(title ILIKE '%in%' OR description ILIKE '%in%' OR affected_file ILIKE '%in%') AND category = 'xss'`, 300, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			matches := u.checkEveryPage(t, tc.f, ` AND `+tc.where)
			require.GreaterOrEqual(t, matches, tc.min, "fixture matches")
			if tc.min == 0 {
				require.Zero(t, matches, "fixture matches")
			}
			f := tc.f
			f.OrgID, f.SortBy, f.Desc, f.Limit = u.org, "found_at", true, 7
			require.True(t, f.keyScoped(), "scoped")
			m, err := matchKeys(u.ctx, u.s.Pool, f, true)
			require.NoError(t, err)
			require.Equal(t, tc.complement, m.not[2], "files counted as their complement")
			r, err := u.s.Resolve(u.ctx, f)
			require.NoError(t, err)
			require.True(t, r.keyCounted(), "counted by the key counters")
			n, ok := r.keyTotal()
			require.Equal(t, tc.one, ok, "total from the key counters")
			if !ok {
				return
			}
			require.Equal(t, int64(matches), n, "total from the key counters")
			if n < 3*int64(f.Limit) || !r.keys.indexed() {
				return
			}
			// The last page is read from the other end, in the opposite order.
			r.Offset = int(n-1) / r.Limit * r.Limit
			in := r.reversed()
			assert.NotEqual(t, r.Desc, in.Desc, "the last page read in the opposite order")
			assert.Less(t, in.Offset, r.Limit, "the last page read from the other end")
			// Sorted by severity, the page is found among the severities
			// it spans.
			if f.Severity == "" {
				r.SortBy, r.Offset = "severity", int(n/2)
				banded := r.rankWindow()
				assert.NotZero(t, banded.rankHi, "severity order: the page's severities")
				assert.Less(t, banded.Offset, r.Offset, "severity order: the severities before the page skipped")
			}
		})
	}
}

// TestKeyScoped lists the searches whose key counts Resolve reads within a
// repository or a category.
func TestKeyScoped(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Filter
		want bool
	}{
		{"q alone", Filter{Text: "x"}, false},
		{"q with a repository", Filter{Text: "x", RepoKey: "r"}, true},
		{"prefix with a category, severity and state", Filter{FilePrefix: "src/", Category: "xss", Severity: "high", State: "open"}, true},
		{"q with a repository and a category", Filter{Text: "x", RepoKey: "r", Category: "xss"}, true},
		{"within a scan", Filter{Text: "x", RepoKey: "r", ScanID: uuid.NewString()}, false},
		{"with a tag", Filter{Text: "x", Category: "xss", Tag: "pci"}, false},
		{"with a found_at bound", Filter{Text: "x", RepoKey: "r", FoundSince: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.f.keyScoped())
		})
	}
}
