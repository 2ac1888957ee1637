package store

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchRow is one measured row of BenchmarkList1M: a filter's page in one
// order, and its time per List (zero when the row did not run).
type benchRow struct {
	filter, sort string
	page         int
	perOp        time.Duration
}

// searchPrefix, exportPrefix and floorPrefix name BenchmarkList1M's
// search, export and floor rows; the others are the spec's filters.
const (
	searchPrefix = "search: "
	exportPrefix = "export: "
	floorPrefix  = "floor: "
)

// specRow reports whether r is a row of the spec's filters.
func specRow(r benchRow) bool {
	return !strings.HasPrefix(r.filter, searchPrefix) && !strings.HasPrefix(r.filter, exportPrefix) &&
		!strings.HasPrefix(r.filter, floorPrefix)
}

// aboveSpec is a search filter's slowest page (benchRow) where it lies
// above the slowest of the spec's filters measured in the same run, with
// its ratio to that.
type aboveSpec struct {
	benchRow
	ratioToSpecs float64
}

// specRange returns the fastest, median and slowest time of the spec's
// filters among rows (those that ran), and n, their number.
func specRange(rows []benchRow) (lo, median, hi time.Duration, n int) {
	var times []time.Duration
	for _, r := range rows {
		if r.perOp > 0 && specRow(r) {
			times = append(times, r.perOp)
		}
	}
	if len(times) == 0 {
		return 0, 0, 0, 0
	}
	slices.Sort(times)
	return times[0], times[len(times)/2], times[len(times)-1], len(times)
}

// searchesAboveSpecs returns the search filters whose slowest page (in any
// order) took longer than hi, the slowest of the spec's filters, slowest
// first: the rows the search indexes have yet to bring within the spec's
// range, each with its ratio to hi.
func searchesAboveSpecs(rows []benchRow, hi time.Duration) []aboveSpec {
	worst := map[string]benchRow{}
	for _, r := range rows {
		if r.perOp == 0 || !strings.HasPrefix(r.filter, searchPrefix) {
			continue
		}
		if w, ok := worst[r.filter]; !ok || r.perOp > w.perOp {
			worst[r.filter] = r
		}
	}
	var out []aboveSpec
	for _, r := range worst {
		if hi > 0 && r.perOp > hi {
			out = append(out, aboveSpec{benchRow: r, ratioToSpecs: float64(r.perOp) / float64(hi)})
		}
	}
	slices.SortFunc(out, func(a, b aboveSpec) int {
		if a.perOp != b.perOp {
			return cmp.Compare(b.perOp, a.perOp)
		}
		return strings.Compare(a.filter, b.filter)
	})
	return out
}

// benchSummary renders the spec's filters' range and the search filters
// above it, which is what the search indexes are measured against, then
// the floors: the least that an exact page or total of such a search
// reads, measured in the same run (see list1MFloors).
func benchSummary(rows []benchRow) string {
	s := specSummary(rows)
	var floors []benchRow
	for _, r := range rows {
		if r.perOp > 0 && strings.HasPrefix(r.filter, floorPrefix) {
			floors = append(floors, r)
		}
	}
	if len(floors) == 0 {
		return s
	}
	_, _, hi, _ := specRange(rows)
	var t strings.Builder
	t.WriteString(s)
	fmt.Fprintf(&t, "floors (index entries read, nothing tested; × the slowest of the spec's filters where they ran):\n")
	for _, r := range floors {
		ratio := ""
		if hi > 0 {
			ratio = fmt.Sprintf(" %5.2f×", float64(r.perOp)/float64(hi))
		}
		fmt.Fprintf(&t, "  %-52s %8.2f ms%s\n", strings.TrimPrefix(r.filter, floorPrefix), float64(r.perOp.Microseconds())/1000, ratio)
	}
	return t.String()
}

// specSummary renders the spec's filters' range and the search filters
// above it.
func specSummary(rows []benchRow) string {
	lo, median, hi, n := specRange(rows)
	if n == 0 {
		return "\nno row of the spec's filters ran: no range to compare the searches with\n"
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	var t strings.Builder
	fmt.Fprintf(&t, "\nthe spec's filters: %.2f–%.2f ms, median %.2f ms, over %d rows\n", ms(lo), ms(hi), ms(median), n)
	above := searchesAboveSpecs(rows, hi)
	if len(above) == 0 {
		fmt.Fprintf(&t, "every search filter's pages are within that range\n")
		return t.String()
	}
	fmt.Fprintf(&t, "search filters whose slowest page is above that range (× the slowest of the spec's filters):\n")
	for _, a := range above {
		fmt.Fprintf(&t, "  %-52s %8.2f ms %5.2f×  (%s, page %d)\n", a.filter, ms(a.perOp), a.ratioToSpecs, a.sort, a.page)
	}
	return t.String()
}

func TestBenchSummary(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	rows := []benchRow{
		{filter: "scan=-", sort: "found_at desc", page: 1, perOp: ms(1)},
		{filter: "scan=-", sort: "found_at desc", page: 1000, perOp: ms(4)},
		{filter: "scan=-,sev=high", sort: "severity desc", page: 1, perOp: ms(2)},
		{filter: "scan=-,sev=high", sort: "severity desc", page: 1000, perOp: 0}, // did not run
		{filter: "export: scan42(10k)", sort: "severity desc", perOp: ms(50)},    // not a page
		{filter: "search: repo(100k)", sort: "found_at desc", page: 1, perOp: ms(1.5)},
		{filter: "search: repo(100k)", sort: "found_at desc", page: 1000, perOp: ms(3.9)},
		{filter: "search: q=wide", sort: "found_at desc", page: 1, perOp: ms(6)},
		{filter: "search: q=wide", sort: "updated_at desc", page: 1000, perOp: ms(12)},
		{filter: "search: tag+q", sort: "severity desc", page: 1, perOp: ms(8)},
		{filter: "search: never ran", sort: "found_at desc", page: 1, perOp: 0},
		{filter: "floor: walk of 60k entries", perOp: ms(6)}, // not a spec filter
	}
	lo, median, hi, n := specRange(rows)
	if lo != ms(1) || median != ms(2) || hi != ms(4) || n != 3 {
		t.Fatalf("spec range = %v, %v, %v over %d; want 1ms, 2ms, 4ms over 3", lo, median, hi, n)
	}
	above := searchesAboveSpecs(rows, hi)
	want := []aboveSpec{
		{benchRow{filter: "search: q=wide", sort: "updated_at desc", page: 1000, perOp: ms(12)}, 3},
		{benchRow{filter: "search: tag+q", sort: "severity desc", page: 1, perOp: ms(8)}, 2},
	}
	if len(above) != len(want) {
		t.Fatalf("above = %+v; want %+v", above, want)
	}
	for i := range want {
		if above[i] != want[i] {
			t.Errorf("above[%d] = %+v; want %+v", i, above[i], want[i])
		}
	}
	s := benchSummary(rows)
	for _, line := range []string{
		"the spec's filters: 1.00–4.00 ms, median 2.00 ms, over 3 rows",
		"search: q=wide", "3.00×", "(updated_at desc, page 1000)",
		"search: tag+q", "2.00×",
		"floors (", "walk of 60k entries", "6.00 ms  1.50×",
	} {
		if !strings.Contains(s, line) {
			t.Errorf("summary lacks %q:\n%s", line, s)
		}
	}
	if strings.Contains(s, "repo(100k)") {
		t.Errorf("summary lists a search within the spec's range:\n%s", s)
	}
	if got := benchSummary(rows[5:7]); !strings.Contains(got, "no row of the spec's filters ran") {
		t.Errorf("summary without spec rows = %q", got)
	}
	if got := benchSummary(rows[11:]); !strings.Contains(got, "no row of the spec's filters ran") ||
		!strings.Contains(got, "walk of 60k entries") || !strings.Contains(got, "6.00 ms\n") {
		t.Errorf("summary of a floor alone = %q", got)
	}
	if got := benchSummary(rows[:7]); !strings.Contains(got, "every search filter's pages are within that range") {
		t.Errorf("summary with every search within range = %q", got)
	}
}
