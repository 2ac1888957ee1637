package store

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
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

// checkLiterals fails t if the keys travel as anything but binary uuid[]
// (db.UUIDArray): a []string, for which pgx first tries the binary form,
// which a string cannot take, and builds that failure's message, every key
// printed, before it sends text; or a text array literal (db.TextArray),
// which the server parses key by key (about a millisecond for 1,111).
func checkLiterals(t *testing.T, label string, args []any) {
	t.Helper()
	for i, a := range args {
		switch v := a.(type) {
		case []string:
			t.Errorf("%s: argument %d is a []string", label, i+1)
		case string:
			if strings.HasPrefix(v, "{") {
				t.Errorf("%s: argument %d is a text array literal", label, i+1)
			}
		}
	}
}

// syntheticKeys returns resolved keys for the columns cols (0 title, 1
// description, 2 file), n keys each, of which column neg (when 0 to 2) is
// held as its complement, with their counts per key and per severity as a
// page past the first needs them.
func syntheticKeys(cols []int, n int, neg int, walk bool) *searchKeys {
	k := &searchKeys{walk: walk}
	for _, c := range cols {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = uuid.NewString()
		}
		switch c {
		case 0:
			k.title = keys
		case 1:
			k.description = keys
		case 2:
			k.file = keys
		}
		k.matched[c] = int64(40 * n)
		k.bySeverity[c] = []int64{int64(8 * n), int64(8 * n), int64(8 * n), int64(8 * n), int64(8 * n)}
		if c == neg {
			k.not[c] = true
			continue
		}
		for range keys {
			k.counts[c] = append(k.counts[c], 40)
			k.severities[c] = append(k.severities[c], []int64{8, 8, 8, 8, 8})
		}
		k.hits += int64(n)
	}
	k.tagged, k.scanned = 100000, 100000
	return k
}

// TestSearchStatementsUseEveryArgument is TestStatementsUseEveryArgument
// for searches with q or a file prefix, their keys resolved (synthetic
// keys: one or many in one column, keys in two columns, a column held as
// its complement, the list walked or the keys read), with the other
// filters, a tag and a scan, counted before the page or not, in every
// order and on a first and a deeper page: every page, total and scan key
// count statement the keyed plans render must use each argument it is
// sent, and send the keys in binary (see checkLiterals).
func TestSearchStatementsUseEveryArgument(t *testing.T) {
	t.Parallel()
	type keyShape struct {
		cols []int
		n    int
		neg  int
		walk bool
	}
	shapes := []keyShape{
		{[]int{2}, 1, -1, false}, {[]int{1}, 1, -1, false}, {[]int{1}, 120, -1, false}, {[]int{1}, 120, -1, true},
		{[]int{0, 2}, 3, -1, false}, {[]int{0, 1, 2}, 70, -1, false}, {[]int{1, 2}, 70, 1, true}, {[]int{2}, 140, -1, false},
	}
	whole := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	n := 0
	var pages []string
	for _, shape := range shapes {
		for _, search := range []Filter{{Text: "handler"}, {FilePrefix: "src/"}, {Text: "handler", FilePrefix: "src/"}} {
			if shape.neg >= 0 && search.FilePrefix != "" {
				continue // a prefix's keys are never held as a complement
			}
			if search.FilePrefix != "" && (len(shape.cols) != 1 || shape.cols[0] != 2) {
				continue // a prefix's keys are paths
			}
			for _, other := range []Filter{{}, {Severity: "high"}, {State: "open"}, {Tag: "pci"}, {ScanID: uuid.NewString()},
				{Tag: "pci", ScanID: uuid.NewString()}, {Category: "xss", RepoKey: "git.example.com/acme/app"},
				{FoundSince: whole, FoundUntil: whole.Add(30*time.Hour + 7*time.Minute)}} {
				for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
					for _, desc := range []bool{false, true} {
						for _, offset := range []int{0, 30, 3000} {
							for _, pre := range []bool{false, true} {
								for _, scanDriven := range []bool{false, true} {
									if scanDriven && (!pre || other.ScanID == "") {
										continue
									}
									f := other
									f.Text, f.FilePrefix = search.Text, search.FilePrefix
									f.OrgID, f.SortBy, f.Desc, f.Limit, f.Offset = uuid.NewString(), sortBy, desc, 15, offset
									f.keys = syntheticKeys(shape.cols, shape.n, shape.neg, shape.walk)
									f.precounted, f.precount, f.scanDriven = pre, 5000, scanDriven
									label := fmt.Sprintf("%s keys %+v precounted=%t scanDriven=%t offset=%d", describeFilter(f), shape, pre, scanDriven, offset)
									page, pageArgs, total, totalArgs := f.Queries()
									checkParams(t, label+" page", page, pageArgs)
									checkParams(t, label+" total", total, totalArgs)
									checkLiterals(t, label+" page and total", append(pageArgs, totalArgs...))
									if q, args, ok := f.scanKeyCountQuery(); ok {
										checkParams(t, label+" scan key count", q, args)
										checkLiterals(t, label+" scan key count", args)
									}
									pages = append(pages, page)
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
		t.Fatalf("checked %d searches", n)
	}
	// The keyed plans of the page were all rendered (markers as in
	// TestSearchMatchesReference).
	all := strings.Join(pages, "\n")
	for _, marker := range []string{"WITH y AS MATERIALIZED", "WHERE f.id = p.id OFFSET 0", "FROM findings.finding_tags t WHERE",
		"FROM findings.occurrences o", "SELECT m.id, m.found_at", "))) IS TRUE", "))) IS FALSE", "t.finding_id = f.id AND t.tag ="} {
		if !strings.Contains(all, marker) {
			t.Errorf("no page rendered %q", marker)
		}
	}
}
