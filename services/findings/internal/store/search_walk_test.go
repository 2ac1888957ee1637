package store

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWalkBudget: a search that walks the organization's list, chosen as
// if its matches were spread evenly over it, reads at most its budget of
// entries, and when its matches all lie beyond the budget (every one older
// than the 6,000 newest findings, newest first) List reads the page from
// the keys' indexes instead; with the matches first, the walk fills its
// page within the budget. Pages and totals equal what the findings say,
// in every order, first, second and last page, with either plan for the
// walk's statement.
func TestWalkBudget(t *testing.T) {
	u := newUnit(t)
	const matches, others, texts = 1500, 6000, 300
	sc := u.scan("https://git.example.com/acme/app")
	u.reportMany(sc, matches, func(i int) Reported {
		return Reported{Fingerprint: fmt.Sprintf("m%d", i), Title: "Rule", Category: "injection", Severity: Severities[i%len(Severities)],
			Verified: true, Description: fmt.Sprintf("Legacy sink in handler %d", i%texts), AffectedFile: "src/a.go"}
	})
	u.reportMany(sc, others, func(i int) Reported {
		return Reported{Fingerprint: fmt.Sprintf("o%d", i), Title: "Rule", Category: "injection", Severity: Severities[i%len(Severities)],
			Verified: true, Description: fmt.Sprintf("Tainted data reaches handler %d", i%100), AffectedFile: "src/b.go"}
	})
	_, err := u.s.Pool.Exec(u.ctx, `ANALYZE findings.findings`)
	require.NoError(t, err)
	statement := 0
	for _, tc := range []struct {
		sortBy string
		desc   bool
		cut    bool // the walk alone falls short of page 1
	}{{"found_at", true, true}, {"found_at", false, false}, {"updated_at", true, true}} {
		for _, page := range []int{1, 2, matches / 15} {
			f := Filter{OrgID: u.org, Text: "LEGACY SINK", SortBy: tc.sortBy, Desc: tc.desc, Limit: 15, Offset: (page - 1) * 15}
			t.Run(fmt.Sprintf("sort=%s/desc=%t/page=%d", tc.sortBy, tc.desc, page), func(t *testing.T) {
				var want []string
				dir := "ASC"
				if tc.desc {
					dir = "DESC"
				}
				require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT coalesce(array_agg(id::text ORDER BY `+tc.sortBy+` `+dir+`, found_at `+dir+`, id `+dir+`), '{}')
					FROM findings.findings WHERE org_id = $1 AND verification_status = 'approved' AND description ILIKE '%legacy sink%'`, u.org).Scan(&want))
				require.Len(t, want, matches)
				ids, total := listIDs(t, u.s, f)
				assert.EqualValues(t, matches, total)
				assert.Equal(t, want[f.Offset:f.Offset+f.Limit], ids)
				if page != 1 {
					return
				}
				r, err := u.s.Resolve(u.ctx, f)
				require.NoError(t, err)
				require.True(t, r.keys.walk, "the even spread has the search walk")
				require.EqualValues(t, walkBudgetMin, r.keys.walkBudget)
				sql, args, _, _ := r.Queries()
				for _, mode := range planModes {
					statement++
					p := u.prepareWith(t, nil, mode, fmt.Sprint("walk_", statement), "", sql, args...)
					read := findingsRead(p)
					assert.LessOrEqual(t, read, float64(walkBudgetMin+f.Limit), "%s: the walk within its budget, and the page's rows", mode)
					rows := p.Run()
					n := 0
					for rows.Next() {
						n++
					}
					rows.Close()
					if tc.cut {
						assert.Less(t, n, f.Limit, "%s: the walk alone falls short of the page", mode)
					} else {
						assert.Equal(t, f.Limit, n, "%s: the walk fills the page", mode)
					}
				}
			})
		}
	}
}

// TestWalkUnboundedInSmallOrganization: an organization with no more
// findings than the least budget walks its list without a budget (the
// walk's statement then has no inner bound to pay for), and its pages
// equal what the findings say.
func TestWalkUnboundedInSmallOrganization(t *testing.T) {
	u := newUnit(t)
	const matches, others = 300, 300
	sc := u.scan("https://git.example.com/acme/small")
	u.reportMany(sc, matches+others, func(i int) Reported {
		desc := fmt.Sprintf("Legacy sink in handler %d", i%150)
		if i >= matches {
			desc = fmt.Sprintf("Tainted data reaches handler %d", i%50)
		}
		return Reported{Fingerprint: fmt.Sprintf("s%d", i), Title: "Rule", Category: "injection", Severity: Severities[i%len(Severities)],
			Verified: true, Description: desc, AffectedFile: "src/a.go"}
	})
	f := Filter{OrgID: u.org, Text: "legacy sink", SortBy: "found_at", Desc: true, Limit: 15}
	r, err := u.s.Resolve(u.ctx, f)
	require.NoError(t, err)
	require.True(t, r.keys.walk, "the even spread has the search walk")
	assert.Zero(t, r.keys.walkBudget, "no budget where the organization holds fewer findings")
	sql, _, _, _ := r.Queries()
	assert.NotContains(t, sql, "LIMIT "+fmt.Sprint(walkBudgetMin), "the walk's statement without its inner bound")
	var want []string
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT array_agg(id::text ORDER BY found_at DESC, id DESC) FROM findings.findings
		WHERE org_id = $1 AND description ILIKE '%legacy sink%'`, u.org).Scan(&want))
	ids, total := listIDs(t, u.s, f)
	assert.EqualValues(t, matches, total)
	assert.Equal(t, want[:15], ids)
}
