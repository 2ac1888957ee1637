package store

import (
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
// a row each, as ms per List. It seeds a fresh database (about a minute)
// and drops it.
func BenchmarkSearchSkewed(b *testing.B) {
	s, org := seedSearchBench(b, searchSeed{name: "skew", findings: 300000, foundAt: `g * interval '10 seconds'`,
		description: `CASE WHEN g < 60000 THEN 'Legacy sink in handler ' || (g % 1500) ELSE 'Tainted data reaches handler ' || (g % 500) END`})
	var pages []benchPage
	for _, order := range []struct {
		sortBy string
		desc   bool
	}{{"found_at", true}, {"found_at", false}, {"updated_at", true}} {
		for _, page := range []int{1, 100, 1000} {
			pages = append(pages, benchPage{name: fmt.Sprintf("sort=%s/desc=%t/page=%d", order.sortBy, order.desc, page),
				f: Filter{OrgID: org, Text: "legacy sink", SortBy: order.sortBy, Desc: order.desc, Limit: 15, Offset: (page - 1) * 15}})
		}
	}
	benchPages(b, s, "search matching the oldest findings", pages)
}
