package store

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
)

var paramRef = regexp.MustCompile(`\$(\d+)`)

// checkParams fails t unless sql refers to each of its args, $1 to
// $len(args), and to no other: the server cannot type a parameter a
// statement never uses and refuses the statement.
func checkParams(t *testing.T, label, sql string, args []any) {
	t.Helper()
	used := map[int]bool{}
	for _, m := range paramRef.FindAllStringSubmatch(sql, -1) {
		n, _ := strconv.Atoi(m[1])
		used[n] = true
	}
	var unused, unknown []int
	for n := 1; n <= len(args); n++ {
		if !used[n] {
			unused = append(unused, n)
		}
	}
	for n := range used {
		if n < 1 || n > len(args) {
			unknown = append(unknown, n)
		}
	}
	slices.Sort(unknown)
	if len(unused) > 0 || len(unknown) > 0 {
		t.Errorf("%s: %d arguments, never used %v, used without an argument %v:\n%s", label, len(args), unused, unknown, sql)
	}
}

// TestStatementsUseEveryArgument renders the page and total statements of
// every combination of the filters that need no key lookup (the spec's,
// a found_at window from or to a whole hour or within one, a repository, a
// category, a tag and a scan), in every order and on a first and a deeper
// page, and the hour counters' statements of the windows, and checks that
// each uses every argument it is sent. A window from a whole hour with a
// severity once sent the severity's rank for the parts of an hour that it
// does not have, and every such list failed.
func TestStatementsUseEveryArgument(t *testing.T) {
	t.Parallel()
	whole := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	mid := whole.Add(37 * time.Minute)
	times := []time.Time{{}, whole, mid}
	n := 0
	for _, sev := range []string{"", "high"} {
		for _, state := range []string{"", "open"} {
			for _, since := range times {
				for _, until := range times {
					if !until.IsZero() {
						until = until.Add(50 * time.Hour)
					}
					for _, other := range []Filter{{}, {ScanID: uuid.NewString()}, {Tag: "pci"}, {Category: "xss"}, {RepoKey: "git.example.com/acme/app"},
						{Tag: "pci", ScanID: uuid.NewString()}} {
						for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
							for _, desc := range []bool{false, true} {
								for _, offset := range []int{0, 30} {
									f := other
									f.OrgID, f.Severity, f.State, f.FoundSince, f.FoundUntil = uuid.NewString(), sev, state, since, until
									f.SortBy, f.Desc, f.Limit, f.Offset = sortBy, desc, 15, offset
									label := describeFilter(f) + fmt.Sprintf(" offset=%d", offset)
									page, pageArgs, total, totalArgs := f.Queries()
									checkParams(t, label+" page", page, pageArgs)
									checkParams(t, label+" total", total, totalArgs)
									for _, byRank := range []bool{false, true} {
										if sql, args, ok := f.hourCountQuery(byRank); ok {
											checkParams(t, label+fmt.Sprintf(" hour counts (by rank %t)", byRank), sql, args)
										}
									}
									if from, args, ok := f.tagCounters(); ok {
										checkParams(t, label+" tag counters", "SELECT 1 FROM "+from, args)
									}
									n++
								}
							}
						}
					}
				}
			}
		}
	}
	if n < 1000 {
		t.Fatalf("checked %d filters", n)
	}
}
