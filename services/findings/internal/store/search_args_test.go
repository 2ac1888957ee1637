package store

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSearchKeysTravelAsLiterals renders the page and total statements of
// searches over many keys, in each shape a search takes (keys read from
// their indexes, walked in the list, a deep page cut at a bound, a scan's,
// a tag's), and checks that no argument is a []string: pgx would send such
// a uuid[] argument only after a failed try in binary, whose error message
// prints every key (see db.TextArray).
func TestSearchKeysTravelAsLiterals(t *testing.T) {
	keys := make([]string, 40)
	counts := make([]int64, len(keys))
	for i := range keys {
		keys[i] = fmt.Sprintf("%08x-0000-4000-8000-000000000000", i)
		counts[i] = 100
	}
	org, scan := "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	for _, tc := range []struct {
		name string
		f    Filter
		keys searchKeys
	}{
		{"keys' indexes", Filter{Text: "handler"}, searchKeys{description: keys}},
		{"two columns", Filter{Text: "handler"}, searchKeys{title: keys[:3], description: keys}},
		{"walked", Filter{Text: "handler"}, searchKeys{description: keys, walk: true}},
		{"deep page", Filter{Text: "handler", Offset: 15000}, searchKeys{description: keys, counts: [3][]int64{nil, counts}}},
		{"deep page by severity", Filter{Text: "handler", Offset: 15000, SortBy: "severity"},
			searchKeys{description: keys, counts: [3][]int64{nil, counts}}},
		{"a scan's", Filter{Text: "handler", ScanID: scan}, searchKeys{description: keys}},
		{"a scan's walked", Filter{Text: "handler", ScanID: scan}, searchKeys{description: keys, walk: true}},
		{"a tag's", Filter{Text: "handler", Tag: "cwe-7"}, searchKeys{description: keys}},
		{"a file prefix", Filter{FilePrefix: "src/"}, searchKeys{file: keys}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.OrgID, f.Limit = org, 15
			if f.SortBy == "" {
				f.SortBy = "found_at"
			}
			k := tc.keys
			k.hits = int64(len(k.title) + len(k.description) + len(k.file))
			f.keys = &k
			page, pageArgs, total, totalArgs := f.Queries()
			require.NotEmpty(t, page)
			require.NotEmpty(t, total)
			for i, a := range append(pageArgs, totalArgs...) {
				_, isStrings := a.([]string)
				require.False(t, isStrings, "argument %d is a []string", i)
			}
			if q, args, ok := f.scanKeyCountQuery(); ok {
				require.NotEmpty(t, q)
				for i, a := range args {
					_, isStrings := a.([]string)
					require.False(t, isStrings, "scan key count argument %d is a []string", i)
				}
			}
		})
	}
}
