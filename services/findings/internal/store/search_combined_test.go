package store

import (
	"fmt"
	"slices"
	"testing"

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
// The organization is small, so the statements run with sequential and
// bitmap scans off: what is checked is that the key indexes can answer
// them, which the server chooses at scale (see BenchmarkList1M's rows of
// two search filters).
func TestKeySearchesCheckCategoryAndRepoInTheirIndexes(t *testing.T) {
	u := newUnit(t)
	// The rest of the organization, matching none of the searches: the
	// searches' matches are a small share of its findings, so their pages
	// read the keys' indexes rather than walk the list.
	u.largeScan(2400, "crypto")
	repos := []Scan{u.scan("https://git.example.com/acme/app"), u.scan("https://git.example.com/acme/lib")}
	for r, sc := range repos {
		u.reportMany(sc, 600, func(i int) Reported {
			return Reported{Fingerprint: fmt.Sprintf("fp-%d-%04d", r, i), Title: []string{"SQL injection", "Open redirect"}[i/3%2], Severity: Severities[i%len(Severities)],
				Category:     []string{"xss", "injection", "ssrf"}[i%3],
				Description:  fmt.Sprintf("User input reaches sink %d unchecked.", i%30),
				AffectedFile: fmt.Sprintf("src/%s/file%d.go", []string{"api", "web", "cli", "lib"}[i/7%4], i%40), Verified: true}
		})
	}
	_, err := u.s.Pool.Exec(u.ctx, "VACUUM ANALYZE findings.findings")
	require.NoError(t, err)
	app := repos[0].repoKey()
	for _, tc := range []struct {
		name  string
		f     Filter
		where string // the filter in SQL
	}{
		{"file_category", Filter{FilePrefix: "src/api/", Category: "xss"}, `starts_with(affected_file, 'src/api/') AND category = 'xss'`},
		{"file_repository", Filter{FilePrefix: "src/api/", RepoKey: app}, `starts_with(affected_file, 'src/api/') AND repo_key = '` + app + `'`},
		{"q_category", Filter{Text: "SINK 1", Category: "ssrf"}, `description ILIKE '%sink 1%' AND category = 'ssrf'`},
		{"q_repository", Filter{Text: "sink 1", RepoKey: app}, `description ILIKE '%sink 1%' AND repo_key = '` + app + `'`},
		{"title_category_state", Filter{Text: "injection", Category: "xss", State: "open"}, `title ILIKE '%injection%' AND category = 'xss' AND state = 'open'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, sortBy := range []string{"found_at", "severity", "updated_at"} {
				f := tc.f
				f.OrgID, f.SortBy, f.Desc, f.Limit, f.Offset = u.org, sortBy, true, 5, 5
				var want []string
				require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT coalesce(array_agg(id::text ORDER BY `+f.orderBy("f")+`), '{}')
					FROM findings.findings f WHERE org_id = $1 AND `+tc.where, u.org).Scan(&want))
				require.Greater(t, len(want), 10, "matches")
				ids, total := listIDs(t, u.s, f)
				require.Equal(t, want[5:10], ids, "%s: page 2", sortBy)
				require.EqualValues(t, len(want), total, "%s: total", sortBy)

				r, err := u.s.Resolve(u.ctx, f)
				require.NoError(t, err)
				require.NotNil(t, r.keys, "resolved")
				require.True(t, r.keys.indexed(), "the keys' indexes serve the search")
				page, pageArgs, count, countArgs := r.Queries()
				for _, mode := range planModes {
					// A subtest per plan, whose end releases its transactions.
					t.Run(sortBy+"/"+mode, func(t *testing.T) {
						off := []string{"SET LOCAL enable_seqscan = off", "SET LOCAL enable_bitmapscan = off"}
						c := u.prepareWith(t, off, mode, "combined_count_"+tc.name+"_"+sortBy, "", count, countArgs...)
						assert.Empty(t, findingScans(c.Explain(), ""), "finding rows read for the total")
						p := u.prepareWith(t, off, mode, "combined_page_"+tc.name+"_"+sortBy, "", page, pageArgs...)
						assert.Empty(t, findingScans(p.Explain(), "findings_pkey"), "finding rows read for the page")
					})
				}
			}
		})
	}
}

// findingScans returns the scans of the findings' rows in a plan, other
// than lookups through the index except (the page's own rows, fetched by
// id): each as its node type and index.
func findingScans(plan map[string]any, except string) []string {
	var scans []string
	dbtest.EachNode(plan, func(node map[string]any) {
		kind, _ := node["Node Type"].(string)
		index, _ := node["Index Name"].(string)
		if node["Relation Name"] != "findings" || kind == "Index Only Scan" || except != "" && index == except {
			return
		}
		scans = append(scans, kind+" "+index)
	})
	slices.Sort(scans)
	return scans
}
