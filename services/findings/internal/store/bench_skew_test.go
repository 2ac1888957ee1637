package store

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkSearchSkewed measures a search whose matches all lie at one end
// of the list, as a rule's findings do once its wording changed: 300,000
// approved findings in one organization, of which q matches the 60,000
// oldest, through 1,500 descriptions of 40 findings each; the 240,000
// newer ones have 500 other descriptions. Page 1, 100 and 1,000 newest
// first (the matches after every other finding), oldest first (the
// matches first) and in update order (spread over the list), exact totals,
// a row each, as ms per List, across the organization and within the one
// scan that found them all (where q's 1,500 of 2,000 descriptions are held
// as the 500 others, see searchKeys.not), also most severe first. It seeds
// a fresh database (about a minute) and drops it.
func BenchmarkSearchSkewed(b *testing.B) {
	s, org := seedSearchBench(b, searchSeed{name: "skew", findings: 300000, foundAt: `g * interval '10 seconds'`,
		description: `CASE WHEN g < 60000 THEN 'Legacy sink in handler ' || (g % 1500) ELSE 'Tainted data reaches handler ' || (g % 500) END`})
	var scan string
	if err := s.Pool.QueryRow(context.Background(), `SELECT id::text FROM findings.scans WHERE org_id = $1`, org).Scan(&scan); err != nil {
		b.Fatal(err)
	}
	type order struct {
		sortBy string
		desc   bool
	}
	var pages []benchPage
	for _, within := range []struct {
		name, scan string
		orders     []order
	}{
		{"", "", []order{{"found_at", true}, {"found_at", false}, {"updated_at", true}}},
		{"scan/", scan, []order{{"found_at", true}, {"found_at", false}, {"updated_at", true}, {"severity", true}}},
	} {
		for _, o := range within.orders {
			for _, page := range []int{1, 100, 1000} {
				pages = append(pages, benchPage{name: fmt.Sprintf("%ssort=%s/desc=%t/page=%d", within.name, o.sortBy, o.desc, page),
					f: Filter{OrgID: org, ScanID: within.scan, Text: "legacy sink", SortBy: o.sortBy, Desc: o.desc, Limit: 15, Offset: (page - 1) * 15}})
			}
		}
	}
	benchPages(b, s, "search matching the oldest findings", pages)
}

// BenchmarkScanSearchFewMatches measures a search within a scan that holds
// far fewer of the organization's matches than its share of the findings:
// 200,000 approved findings found by two scans in turn (even g by the
// first, odd by the second), of which q matches the first scan's 30
// oldest and 60,000 of the second's, through 480 descriptions; the others
// have 2,100 descriptions. Judged by its share of the organization's
// matches, the first scan would hold 30,000 and its pages would walk its
// occurrences (see searchKeys.walk), where its 30 lie at the far end of
// its list newest first; it holds 30 of the 480 keys (see
// searchKeys.holdOnly). Page 1 and 2 of each order within each scan,
// exact totals, a row each, as ms per List. It seeds a fresh database
// (about a minute) and drops it.
func BenchmarkScanSearchFewMatches(b *testing.B) {
	seed := searchSeed{name: "fewmatches", findings: 200000, foundAt: `g * interval '10 seconds'`, scans: 2, scanOf: `g % 2`,
		description: `CASE WHEN g < 60 AND g % 2 = 0 OR g % 2 = 1 AND g % 10 < 6 THEN 'Legacy sink in handler ' || (g % 1500)
			ELSE 'Tainted data reaches handler ' || (g % 3000) END`}
	s, org := seedSearchBench(b, seed)
	var pages []benchPage
	for i, within := range []string{"few", "many"} {
		for _, o := range []struct {
			sortBy string
			desc   bool
		}{{"found_at", true}, {"found_at", false}, {"updated_at", true}, {"severity", true}} {
			for _, page := range []int{1, 2} {
				pages = append(pages, benchPage{name: fmt.Sprintf("%s/sort=%s/desc=%t/page=%d", within, o.sortBy, o.desc, page),
					f: Filter{OrgID: org, ScanID: seed.scanID(i), Text: "legacy sink", SortBy: o.sortBy, Desc: o.desc, Limit: 15, Offset: (page - 1) * 15}})
			}
		}
	}
	benchPages(b, s, "search of a scan with few of the matches", pages)
}
