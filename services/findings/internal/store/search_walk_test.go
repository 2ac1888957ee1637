package store

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// TestWalkBudget: a search that walks the organization's list, chosen as
// if its matches were spread evenly over it, or a scan's occurrences,
// chosen as the scan's 1,500 matches over 300 texts are a fifth of it,
// reads at most its budget of entries, and when its matches all lie
// beyond the budget (every one older than the 6,000 newest findings,
// newest first) List reads the page from the keys' indexes instead; with
// the matches first, the walk fills its page within the budget. Pages and
// totals equal what the findings say, in every order, first, second and
// last page, with either plan for the walk's statement.
func TestWalkBudget(t *testing.T) {
	for _, inScan := range []bool{false, true} {
		t.Run(map[bool]string{false: "organization", true: "scan"}[inScan], func(t *testing.T) {
			testWalkBudget(t, inScan)
		})
	}
}

// testWalkBudget is TestWalkBudget across the organization, or within the
// one scan that found every finding when inScan is set.
func testWalkBudget(t *testing.T, inScan bool) {
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
	_, err := u.s.Pool.Exec(u.ctx, `ANALYZE findings.findings; ANALYZE findings.occurrences`)
	require.NoError(t, err)
	// read is how many rows a walk's statement reads at most: the
	// findings it walks and its page's, or the scan's occurrences.
	table, scanID, read := "findings", "", float64(walkBudgetMin+15)
	if inScan {
		table, scanID, read = "occurrences", sc.ID, walkBudgetMin
	}
	statement := 0
	for _, tc := range []struct {
		sortBy string
		desc   bool
		cut    bool // the walk alone falls short of page 1
	}{{"found_at", true, true}, {"found_at", false, false}, {"updated_at", true, true}} {
		for _, page := range []int{1, 2, matches / 15} {
			f := Filter{OrgID: u.org, ScanID: scanID, Text: "LEGACY SINK", SortBy: tc.sortBy, Desc: tc.desc, Limit: 15, Offset: (page - 1) * 15}
			t.Run(fmt.Sprintf("sort=%s/desc=%t/page=%d", tc.sortBy, tc.desc, page), func(t *testing.T) {
				var want []string
				dir := "ASC"
				if tc.desc {
					dir = "DESC"
				}
				require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT coalesce(array_agg(id::text ORDER BY `+tc.sortBy+` `+dir+`, found_at `+dir+`, id `+dir+`), '{}')
					FROM findings.findings f WHERE org_id = $1 AND verification_status = 'approved' AND description ILIKE '%legacy sink%'
						AND ($2 = '' OR EXISTS (SELECT 1 FROM findings.occurrences o WHERE o.finding_id = f.id AND o.scan_id::text = $2))`,
					u.org, scanID).Scan(&want))
				require.Len(t, want, matches)
				ids, total := listIDs(t, u.s, f)
				assert.EqualValues(t, matches, total)
				assert.Equal(t, want[f.Offset:f.Offset+f.Limit], ids)
				if page != 1 {
					return
				}
				r, err := u.s.Resolve(u.ctx, f)
				require.NoError(t, err)
				require.True(t, r.keys.walk, "the matches' spread has the search walk")
				require.EqualValues(t, walkBudgetMin, r.keys.walkBudget)
				sql, args, _, _ := r.Queries()
				for _, mode := range planModes {
					statement++
					p := u.prepareWith(t, nil, mode, fmt.Sprint("walk_", table, "_", statement), "", sql, args...)
					assert.LessOrEqual(t, dbtest.RowsRead(p.Explain(), table, false), read, "%s: the walk within its budget", mode)
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

// TestScanSearchHeldKeys: a search within a scan keeps only the keys the
// scan holds (its key counters), so a scan holding 45 of the 300 texts q
// matches across the organization (beside 1,000 it does not) reads 45
// keys' streams, and its matches are estimated from those 45, not as its
// share of the organization's 1,545: the page is read from the keys'
// indexes, not by walking the scan. Pages and totals equal what the
// findings say in every order, with a severity and a state besides, after
// a triage; a scan that holds none of the texts, and a scan of another
// organization, match nothing.
func TestScanSearchHeldKeys(t *testing.T) {
	u := newUnit(t)
	const inScan, others, elsewhere, texts = 45, 3000, 1500, 300
	sc := u.scan("https://git.example.com/acme/app")
	legacy := func(prefix string) func(i int) Reported {
		return func(i int) Reported {
			return Reported{Fingerprint: fmt.Sprintf("%s%d", prefix, i), Title: "Rule", Category: "injection", Severity: Severities[i%len(Severities)],
				Verified: true, Description: fmt.Sprintf("Legacy sink in handler %d", i%texts), AffectedFile: "src/a.go"}
		}
	}
	u.reportMany(sc, inScan, legacy("m"))
	u.reportMany(sc, others, func(i int) Reported {
		return Reported{Fingerprint: fmt.Sprintf("o%d", i), Title: "Rule", Category: "injection", Severity: Severities[i%len(Severities)],
			Verified: true, Description: fmt.Sprintf("Tainted data reaches handler %d", i%1000), AffectedFile: "src/b.go"}
	})
	u.reportMany(u.scan("https://git.example.com/acme/other"), elsewhere, legacy("e"))
	_, err := u.s.Pool.Exec(u.ctx, `UPDATE findings.findings SET state = 'false_positive'
		WHERE org_id = $1 AND fingerprint IN ('m1', 'm2', 'm7', 'm30')`, u.org)
	require.NoError(t, err)

	f := Filter{OrgID: u.org, ScanID: sc.ID, Text: "legacy sink", Limit: 15}
	r, err := u.s.Resolve(u.ctx, f)
	require.NoError(t, err)
	assert.Len(t, r.keys.description, inScan, "the keys the scan holds")
	assert.EqualValues(t, inScan, r.keys.hits)
	assert.Empty(t, r.keys.title)
	assert.False(t, r.keys.walk, "45 keys read rather than the scan walked")

	for _, tc := range []struct {
		sortBy, severity, state string
		desc                    bool
	}{
		{"found_at", "", "", true}, {"found_at", "", "", false}, {"updated_at", "", "", true}, {"severity", "", "", true},
		{"found_at", "high", "", true}, {"severity", "", "open", false}, {"found_at", "", "false_positive", true},
	} {
		dir := "ASC"
		if tc.desc {
			dir = "DESC"
		}
		var want []string
		require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT coalesce(array_agg(f.id::text ORDER BY `+
			map[string]string{"found_at": "f.found_at", "updated_at": "f.updated_at", "severity": "f.severity_rank"}[tc.sortBy]+` `+dir+`, f.found_at `+dir+`, f.id `+dir+`), '{}')
			FROM findings.findings f JOIN findings.occurrences o ON o.finding_id = f.id AND o.scan_id = $2
			WHERE f.org_id = $1 AND f.verification_status = 'approved' AND f.description ILIKE '%legacy sink%'
				AND ($3 = '' OR f.severity = $3) AND ($4 = '' OR f.state = $4)`, u.org, sc.ID, tc.severity, tc.state).Scan(&want))
		require.NotEmpty(t, want)
		for page := 1; (page-1)*7 < len(want); page++ {
			f := Filter{OrgID: u.org, ScanID: sc.ID, Text: "legacy sink", SortBy: tc.sortBy, Desc: tc.desc,
				Severity: tc.severity, State: tc.state, Limit: 7, Offset: (page - 1) * 7}
			ids, total := listIDs(t, u.s, f)
			assert.EqualValues(t, len(want), total, "%+v page %d", tc, page)
			assert.Equal(t, want[f.Offset:min(f.Offset+f.Limit, len(want))], ids, "%+v page %d", tc, page)
			n, err := u.s.Count(u.ctx, f)
			require.NoError(t, err)
			assert.EqualValues(t, len(want), n, "%+v", tc)
		}
	}

	for _, f := range []Filter{
		{OrgID: u.org, ScanID: u.scan("https://git.example.com/acme/empty").ID, Text: "legacy sink", Limit: 15},
		{OrgID: uuid.NewString(), ScanID: sc.ID, Text: "legacy sink", Limit: 15},
	} {
		ids, total := listIDs(t, u.s, f)
		assert.Empty(t, ids)
		assert.Zero(t, total)
	}
}
