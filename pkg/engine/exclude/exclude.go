// Package exclude reads the "exclude: <glob>" lines a tenant gives with a
// scan (in custom_context and in attached context documents) and compiles
// them into one matcher.
//
// Patterns are bounded (Limits) and compiled once into one Matcher of
// split glob segments, matched without regular expressions or unbounded
// backtracking: a path costs at most the patterns' total length times its
// own. A regular expression per pattern (76,000 of them, 282 MiB, from two
// million characters) is what held a worker for a scan's whole timeout
// before; one combined regular expression is no better, since Go's
// automaton for a large alternation of "**/" patterns costs about 0.2 ms
// per path at these limits.
package exclude

import (
	"fmt"
	"strings"
)

// Limits bound the patterns of one scan, all sources together.
type Limits struct {
	MaxPatterns int // patterns
	MaxBytes    int // their total length
}

// DefaultLimits: 50 patterns, 2,000 characters in total (the length of
// custom_context itself), plenty for the exclusions a repository needs.
var DefaultLimits = Limits{MaxPatterns: 50, MaxBytes: 2000}

// Parse returns the patterns of text's "exclude: <glob>" lines (the key is
// case-insensitive; leading and trailing slashes are dropped).
func Parse(text string) []string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "exclude") {
			continue
		}
		if g := strings.Trim(strings.TrimSpace(v), "/"); g != "" {
			out = append(out, g)
		}
	}
	return out
}

// Check reports, in a sentence for the caller, whether patterns exceed lim.
func Check(patterns []string, lim Limits) error {
	if len(patterns) > lim.MaxPatterns {
		return fmt.Errorf("has %d exclude patterns; at most %d are allowed per scan", len(patterns), lim.MaxPatterns)
	}
	if n := total(patterns); n > lim.MaxBytes {
		return fmt.Errorf("has exclude patterns of %d characters in total; at most %d are allowed per scan", n, lim.MaxBytes)
	}
	return nil
}

func total(patterns []string) int {
	n := 0
	for _, p := range patterns {
		n += len(p)
	}
	return n
}

// Matcher matches repository paths against every pattern.
type Matcher struct{ globs [][]string } // each pattern's segments, ending in "**"

// Compile builds the matcher of patterns, keeping at most lim's worth (the
// first patterns, in order): scans are checked against lim when they are
// created, so this only guards rows written before the limits existed.
// A nil Matcher (no patterns) matches nothing.
func Compile(patterns []string, lim Limits) (*Matcher, error) {
	m := &Matcher{}
	size := 0
	for _, p := range patterns {
		if len(m.globs) == lim.MaxPatterns || size+len(p) > lim.MaxBytes {
			break
		}
		size += len(p)
		segs := strings.Split(p, "/")
		if segs[len(segs)-1] == "**" {
			// "dir/**" is what is inside dir: at least one more segment.
			segs[len(segs)-1] = "*"
		}
		// A pattern naming a directory matches everything under it.
		m.globs = append(m.globs, append(segs, "**"))
	}
	if len(m.globs) == 0 {
		return nil, nil
	}
	return m, nil
}

// Match reports whether the slash-separated relative path rel, or its base
// name, matches a pattern: "**" matches any number of directories, "*"
// anything but "/", "?" one character but "/"; a pattern matching a
// directory matches everything under it.
//
// Matching never backtracks more than once per position: segments are
// matched with the classic two-pointer wildcard algorithm (a later "**" or
// "*" supersedes an earlier one), so one pattern costs at most the product
// of its length and the path's, typically their sum, and the whole match is
// bounded by the limits' total pattern length times the path's length.
func (m *Matcher) Match(rel string) bool {
	if m == nil {
		return false
	}
	segs := strings.Split(rel, "/")
	base := segs[len(segs)-1:]
	for _, g := range m.globs {
		if matchSegs(g, segs) || (len(segs) > 1 && matchSegs(g, base)) {
			return true
		}
	}
	return false
}

// matchSegs matches path segments against pattern segments, where "**"
// stands for any number of segments.
func matchSegs(p, s []string) bool {
	return wildcard(p, s, func(e string) bool { return e == "**" }, matchSeg)
}

// matchSeg matches one path segment against one pattern segment, where a
// "**" inside a segment (not alone) acts as "*" and "?" is one character.
func matchSeg(p, s string) bool {
	return wildcard([]rune(p), []rune(s), func(r rune) bool { return r == '*' },
		func(pr, sr rune) bool { return pr == '?' || pr == sr })
}

// wildcard matches s against the pattern p, whose elements for which star
// holds match any run of elements and the others the one element match
// accepts.
func wildcard[E any](p, s []E, star func(E) bool, match func(pe, se E) bool) bool {
	pi, si, starP, starS := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && star(p[pi]):
			starP, starS = pi, si
			pi++
		case pi < len(p) && match(p[pi], s[si]):
			pi++
			si++
		case starP >= 0:
			starS++
			pi, si = starP+1, starS
		default:
			return false
		}
	}
	for pi < len(p) && star(p[pi]) {
		pi++
	}
	return pi == len(p)
}
