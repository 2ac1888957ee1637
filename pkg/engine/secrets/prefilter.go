package secrets

import (
	"bytes"
	"fmt"
	"maps"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

// maxWindow bounds how many line breaks a rule's match may span for the rule
// to be run on keyword lines alone; a rule whose matches may span more runs
// on the whole file.
const maxWindow = 16

// The rule set is split in two by what a keyword check can decide.
//
// Line rules have keywords and a regular expression that shows, read with
// regexp/syntax, that every match contains one of the keywords, that the
// match has at most `before` line breaks before it and at most `span` in
// all (both at most maxWindow). A match therefore lies within the lines
// [L-before, L+span] around a line L holding a keyword, and those rules run
// on such windows around every keyword occurrence only, cut out of the file
// with their line numbers remembered. Text of the original file surrounds
// every keyword of the cut-out text as far as a match could reach, so the
// matches found are exactly the file's.
//
// File rules are the rest: no keyword (path-only rules), matches that may
// span any number of lines (private keys, Kubernetes secrets), expressions
// that do not show their keyword, or rules that depend on others. They run on the whole file, and only when one of
// their keywords occurs in it or, for rules without keywords, when their
// path matches.
type prefilter struct {
	lineDet, fileDet *detect.Detector
	kw               *keywords
	// before[k] and span[k] are the largest reach before the keyword and
	// span of the line rules keyed by keyword k (-1 when none is);
	// file[k] says a file rule has keyword k.
	before, span []int
	file         []bool
	// allowlists are the global allowlists.
	allowlists []*config.Allowlist
	// always are the file rules without keywords: they run whenever their
	// path matches (or always, without a path).
	always []config.Rule
}

// newPrefilter splits cfg's rules into line and file rules.
func newPrefilter(cfg config.Config) (*prefilter, error) {
	lineCfg, fileCfg := cfg, cfg
	lineCfg.Rules, fileCfg.Rules = map[string]config.Rule{}, map[string]config.Rule{}
	lineCfg.Keywords, fileCfg.Keywords = map[string]struct{}{}, map[string]struct{}{}
	lineCfg.OrderedRules, fileCfg.OrderedRules = nil, nil
	spanOf, beforeOf := map[string]int{}, map[string]int{}
	fileKw := map[string]bool{}
	p := &prefilter{allowlists: cfg.Allowlists}
	for _, id := range slices.Sorted(maps.Keys(cfg.Rules)) {
		r := cfg.Rules[id]
		span, before, proven := 0, 0, false
		if r.Regex != nil && len(r.Keywords) > 0 && len(r.RequiredRules) == 0 && !r.SkipReport {
			kws := make([]string, len(r.Keywords))
			for i, k := range r.Keywords {
				kws[i] = strings.ToLower(k)
			}
			var err error
			if span, err = lineBreaks(r.Regex.String()); err != nil {
				return nil, fmt.Errorf("rule %s: %w", id, err)
			}
			if before, proven, err = keywordReach(r.Regex.String(), kws); err != nil {
				return nil, fmt.Errorf("rule %s: %w", id, err)
			}
		}
		if proven && span <= maxWindow && before <= span {
			lineCfg.Rules[id] = r
			lineCfg.OrderedRules = append(lineCfg.OrderedRules, id)
			for _, k := range r.Keywords {
				k = strings.ToLower(k)
				lineCfg.Keywords[k] = struct{}{}
				spanOf[k] = max(spanOf[k], span)
				beforeOf[k] = max(beforeOf[k], before)
			}
			continue
		}
		fileCfg.Rules[id] = r
		fileCfg.OrderedRules = append(fileCfg.OrderedRules, id)
		for _, k := range r.Keywords {
			k = strings.ToLower(k)
			fileCfg.Keywords[k] = struct{}{}
			fileKw[k] = true
		}
		if len(r.Keywords) == 0 {
			p.always = append(p.always, r)
		}
	}
	all := slices.Sorted(maps.Keys(spanOf))
	for k := range fileKw {
		if _, ok := spanOf[k]; !ok {
			all = append(all, k)
		}
	}
	var err error
	if p.kw, err = newKeywords(all); err != nil {
		return nil, err
	}
	p.before, p.span = make([]int, len(all)), make([]int, len(all))
	p.file = make([]bool, len(all))
	for i, k := range all {
		if s, ok := spanOf[k]; ok {
			p.before[i], p.span[i] = beforeOf[k], s
		} else {
			p.before[i], p.span[i] = -1, -1
		}
		p.file[i] = fileKw[k]
	}
	p.lineDet, p.fileDet = detect.NewDetector(lineCfg), detect.NewDetector(fileCfg)
	return p, nil
}

// lineBreaks returns the largest number of line breaks a match of the
// regular expression expr can contain, or maxWindow+1 when unbounded.
func lineBreaks(expr string) (int, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 0, fmt.Errorf("parse expression: %w", err)
	}
	return min(breaks(re), maxWindow+1), nil
}

// keywordReach proves that every match of expr contains one of keywords
// and bounds how far before it the match may start: it returns the largest
// number of line breaks a match can have before its first keyword, and
// false when the expression does not show that a keyword is always matched.
func keywordReach(expr string, keywords []string) (int, bool, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 0, false, fmt.Errorf("parse expression: %w", err)
	}
	n, ok := reach(re, keywords)
	return min(n, maxWindow+1), ok, nil
}

// literalLimit bounds the strings an expression is expanded to.
const literalLimit = 128

// info is what analyse learns about an expression: the strings it matches
// when they are few (exact), and whether every match contains a keyword,
// with at most reach line breaks before the first one (proven).
type info struct {
	exact   []string
	exactOK bool
	proven  bool
	reach   int
}

// reach is keywordReach on a parsed expression.
func reach(re *syntax.Regexp, keywords []string) (int, bool) {
	in := analyse(re, keywords)
	if !in.proven && in.exactOK && bears(in.exact, keywords) {
		return breaksIn(in.exact), true
	}
	return in.reach, in.proven
}

// bears reports whether every string of set contains a keyword.
func bears(set []string, keywords []string) bool {
	if len(set) == 0 {
		return false
	}
	for _, s := range set {
		if !slices.ContainsFunc(keywords, func(k string) bool { return strings.Contains(s, k) }) {
			return false
		}
	}
	return true
}

// breaksIn returns the most line breaks in one string of set.
func breaksIn(set []string) int {
	n := 0
	for _, s := range set {
		n = max(n, strings.Count(s, "\n"))
	}
	return n
}

// cross returns every a+b, or false when there would be more than
// literalLimit.
func cross(as, bs []string) ([]string, bool) {
	if len(as)*len(bs) > literalLimit {
		return nil, false
	}
	out := make([]string, 0, len(as)*len(bs))
	for _, a := range as {
		for _, b := range bs {
			out = append(out, a+b)
		}
	}
	return out, true
}

// analyse computes the info of re for keywords (lower case).
func analyse(re *syntax.Regexp, keywords []string) info {
	switch re.Op {
	case syntax.OpLiteral:
		return info{exact: []string{strings.ToLower(string(re.Rune))}, exactOK: true}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return info{exact: []string{""}, exactOK: true}
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] >= literalLimit {
				return info{}
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if l := strings.ToLower(string(r)); !slices.Contains(out, l) {
					out = append(out, l)
				}
			}
		}
		return info{exact: out, exactOK: len(out) <= literalLimit}
	case syntax.OpCapture:
		return analyse(re.Sub[0], keywords)
	case syntax.OpQuest:
		in := analyse(re.Sub[0], keywords)
		if in.exactOK && len(in.exact) < literalLimit {
			return info{exact: append(in.exact, ""), exactOK: true}
		}
		return info{}
	case syntax.OpPlus, syntax.OpRepeat:
		if re.Op == syntax.OpRepeat && re.Min == 0 {
			return info{}
		}
		in := analyse(re.Sub[0], keywords)
		out := info{proven: in.proven, reach: in.reach}
		if !in.proven && in.exactOK && bears(in.exact, keywords) {
			out.proven, out.reach = true, breaksIn(in.exact)
		}
		if re.Op == syntax.OpRepeat && re.Min == re.Max && in.exactOK {
			set := []string{""}
			ok := true
			for range re.Min {
				if set, ok = cross(set, in.exact); !ok {
					break
				}
			}
			out.exact, out.exactOK = set, ok
		}
		return out
	case syntax.OpAlternate:
		out := info{exactOK: true, proven: true}
		for _, sub := range re.Sub {
			in := analyse(sub, keywords)
			if out.exactOK && in.exactOK && len(out.exact)+len(in.exact) <= literalLimit {
				out.exact = append(out.exact, in.exact...)
			} else {
				out.exact, out.exactOK = nil, false
			}
			switch {
			case in.proven:
				out.reach = max(out.reach, in.reach)
			case in.exactOK && bears(in.exact, keywords):
				out.reach = max(out.reach, breaksIn(in.exact))
			default:
				out.proven = false
			}
		}
		if !out.proven {
			out.reach = 0
		}
		return out
	case syntax.OpConcat:
		// A run of consecutive exact parts matches one string of the run's
		// cross product: when each of those holds a keyword, every match
		// does, after the line breaks of the parts before the run.
		out := info{exact: []string{""}, exactOK: true}
		run, runStart := []string{""}, 0 // runStart: breaks before the run
		before := 0
		for _, sub := range re.Sub {
			in := analyse(sub, keywords)
			if !out.proven && in.proven {
				out.proven, out.reach = true, min(before+in.reach, unbounded)
			}
			if in.exactOK {
				if out.exactOK {
					out.exact, out.exactOK = cross(out.exact, in.exact)
				}
				var ok bool
				if run, ok = cross(run, in.exact); !ok {
					run, runStart = in.exact, before
				}
				if !out.proven && bears(run, keywords) {
					out.proven, out.reach = true, min(runStart+breaksIn(run), unbounded)
				}
			} else {
				out.exact, out.exactOK = nil, false
				run, runStart = []string{""}, min(before+breaks(sub), unbounded)
			}
			before = min(before+breaks(sub), unbounded)
		}
		return out
	}
	return info{}
}

// unbounded stands for "any number" in breaks; sums saturate at it.
const unbounded = 1 << 20

func breaks(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return strings.Count(string(re.Rune), "\n")
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
				return 1
			}
		}
		return 0
	case syntax.OpAnyChar:
		return 1
	case syntax.OpCapture, syntax.OpQuest:
		return breaks(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		if breaks(re.Sub[0]) > 0 {
			return unbounded
		}
		return 0
	case syntax.OpRepeat:
		n := breaks(re.Sub[0])
		if n == 0 {
			return 0
		}
		if re.Max < 0 {
			return unbounded
		}
		return min(n*re.Max, unbounded)
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n = min(n+breaks(s), unbounded)
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			n = max(n, breaks(s))
		}
		return n
	default: // empty matches, anchors, word boundaries, OpAnyCharNotNL
		return 0
	}
}

// pathAllowed reports a file that a global allowlist exempts by its path
// alone, which gitleaks skips before looking at its content.
func (p *prefilter) pathAllowed(file string) bool {
	for _, a := range p.allowlists {
		if len(a.Paths) == 0 || !a.PathAllowed(file) {
			continue
		}
		if a.MatchCondition != config.AllowlistMatchAnd ||
			(len(a.Commits) == 0 && len(a.Regexes) == 0 && len(a.StopWords) == 0) {
			return true
		}
	}
	return false
}

// needsFullScan reports content that a byte-wise ASCII keyword check could
// judge differently from gitleaks, which lower-cases the whole text with
// Unicode rules: the Kelvin sign and the dotted capital I lower-case to
// ASCII letters.
func needsFullScan(content []byte) bool {
	for _, b := range content {
		if b >= 0x80 {
			return bytes.Contains(content, []byte("\u212a")) || bytes.Contains(content, []byte("\u0130"))
		}
	}
	return false
}

// detect runs the rules on content as gitleaks would on the whole file,
// the line rules on the lines around their keywords only. Line numbers in
// the results are the file's, counted from 0.
func (p *prefilter) detect(file string, content []byte) []report.Finding {
	if p.pathAllowed(file) {
		return nil
	}
	raw := string(content)
	if needsFullScan(content) {
		return preferSpecific(append(p.fileDet.Detect(detect.Fragment{Raw: raw, FilePath: file}), //nolint:staticcheck // detect.Fragment is the v8 API.
			p.lineDet.Detect(detect.Fragment{Raw: raw, FilePath: file})...)) //nolint:staticcheck // detect.Fragment is the v8 API.
	}
	var windows [][2]int // line ranges, inclusive, in order of their start
	fileHit := false
	line, lineFrom := 0, 0 // the line at offset lineFrom
	p.kw.find(content, func(k, pos int) {
		if p.file[k] {
			fileHit = true
		}
		s := p.span[k]
		if s < 0 {
			return
		}
		line += bytes.Count(content[lineFrom:pos], []byte{'\n'})
		lineFrom = pos
		lo, hi := max(0, line-p.before[k]), line+s
		if n := len(windows); n > 0 && lo <= windows[n-1][1]+1 {
			windows[n-1][1] = max(windows[n-1][1], hi)
			return
		}
		windows = append(windows, [2]int{lo, hi})
	})
	runFile := fileHit
	for _, r := range p.always {
		runFile = runFile || r.Path == nil || r.Path.MatchString(file)
	}
	var out []report.Finding
	if runFile {
		out = p.fileDet.Detect(detect.Fragment{Raw: raw, FilePath: file}) //nolint:staticcheck // detect.Fragment is the v8 API.
	}
	if len(windows) == 0 || len(content)/1_000_000 > maxTargetMegaBytes {
		return preferSpecific(out)
	}
	// Cut the windows out of the file, one after the other, remembering the
	// file line of each cut-out line.
	var cut strings.Builder
	var lineOf []int
	start, at := 0, 0 // start offset of line `at`
	for _, w := range windows {
		for at < w[0] && start < len(raw) {
			next := strings.IndexByte(raw[start:], '\n')
			if next < 0 {
				start = len(raw)
				break
			}
			start += next + 1
			at++
		}
		for at <= w[1] && start < len(raw) {
			end := len(raw)
			if next := strings.IndexByte(raw[start:], '\n'); next >= 0 {
				end = start + next + 1
			}
			cut.WriteString(raw[start:end])
			lineOf = append(lineOf, at)
			start = end
			at++
		}
	}
	if cut.Len() == len(raw) { // the windows cover the whole file
		lineOf = nil
	}
	res := p.lineDet.Detect(detect.Fragment{Raw: cut.String(), FilePath: file}) //nolint:staticcheck // detect.Fragment is the v8 API.
	if lineOf != nil {
		for i := range res {
			res[i].StartLine = lineOf[min(max(res[i].StartLine, 0), len(lineOf)-1)]
			res[i].EndLine = lineOf[min(max(res[i].EndLine, 0), len(lineOf)-1)]
		}
	}
	return preferSpecific(append(out, res...))
}

// preferSpecific drops a generic rule's finding when another rule found a
// secret containing it on the same line, as gitleaks does within one
// detection: each detector did so for its own results, and the line and
// file detectors' results are one detection.
func preferSpecific(res []report.Finding) []report.Finding {
	out := res[:0:0]
	for _, f := range res {
		keep := true
		if strings.Contains(strings.ToLower(f.RuleID), "generic") {
			for _, g := range res {
				if g.StartLine == f.StartLine && g.RuleID != f.RuleID && strings.Contains(g.Secret, f.Secret) &&
					!strings.Contains(strings.ToLower(g.RuleID), "generic") {
					keep = false
					break
				}
			}
		}
		if keep {
			out = append(out, f)
		}
	}
	return out
}
