package store

import "testing"

// TestWalkedFollowsSeverities checks walked's estimate of the findings a
// walk of the list reads: spread evenly by found_at and update time, and
// by the counters' severities under a severity or sorted by severity,
// where the matches may all lie after every finding of the other
// severities (which an even spread would put at the page's end times the
// list's share of the matches: 750 here, where the walk reads 600,150),
// but never nearer than an even spread.
func TestWalkedFollowsSeverities(t *testing.T) {
	org := []int64{200_000, 200_000, 200_000, 200_000, 200_000} // critical … info
	m := &matched{all: 1_000_000, orgBySeverity: org}
	// 20,000 matches through descriptions, every one of them low.
	lowOnly := &searchKeys{bySeverity: [3][]int64{{0, 0, 0, 0, 0}, {0, 0, 0, 20_000, 0}, {0, 0, 0, 0, 0}}}
	// 20,000 matches, a fifth of them of each severity, through titles
	// and paths.
	even := &searchKeys{bySeverity: [3][]int64{{2_000, 2_000, 2_000, 2_000, 2_000}, {0, 0, 0, 0, 0}, {2_000, 2_000, 2_000, 2_000, 2_000}}}
	for _, tc := range []struct {
		name string
		f    Filter
		k    *searchKeys
		end  int64
		want float64
	}{
		{"found_at", Filter{SortBy: "found_at", Desc: true}, lowOnly, 15, 750},
		{"updated_at", Filter{SortBy: "updated_at", Desc: true}, lowOnly, 15, 750},
		{"severity, the matches last", Filter{SortBy: "severity", Desc: true}, lowOnly, 15, 600_000 + 150},
		{"severity ascending, the matches after info", Filter{SortBy: "severity"}, lowOnly, 15, 200_000 + 150},
		{"severity, deep", Filter{SortBy: "severity", Desc: true}, lowOnly, 15_000, 600_000 + 150_000},
		{"severity, past every match", Filter{SortBy: "severity", Desc: true}, lowOnly, 30_000, 1_500_000},
		{"severity, matches in each", Filter{SortBy: "severity", Desc: true}, even, 15, 750},
		{"severity, matches in each, deep", Filter{SortBy: "severity", Desc: true}, even, 15_000, 3*200_000 + 3_000*200_000/4_000},
		{"severity, no page", Filter{SortBy: "severity", Desc: true}, lowOnly, 0, 0},
		{"severity, no matches", Filter{SortBy: "severity", Desc: true}, &searchKeys{bySeverity: [3][]int64{{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}}}, 15, 15 * 1_000_000},
		{"a severity with the matches, nearer than even", Filter{SortBy: "found_at", Desc: true, Severity: "low"}, lowOnly, 15, 750},
		{"a severity without", Filter{SortBy: "found_at", Desc: true, Severity: "high"}, lowOnly, 15, 15 * 200_000},
		{"an unknown severity", Filter{SortBy: "found_at", Desc: true, Severity: "urgent"}, lowOnly, 15, 0},
	} {
		matches := int64(20_000)
		if tc.name == "severity, no matches" {
			matches = 0
		}
		if got := tc.f.walked(tc.k, m, tc.end, matches); got != tc.want {
			t.Errorf("%s: walked %.0f, want %.0f", tc.name, got, tc.want)
		}
	}
}
