// Package verify is the automated verification stage of the scan engine. It
// confirms each candidate before it may become visible: the location must
// exist in the scanned tree, duplicates are merged, candidates in test or
// example code are demoted or dropped, and live-target candidates are
// reproduced with a second request.
package verify

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/services/scan/internal/engine/finding"
)

// Stats counts what the stage did.
type Stats struct {
	Candidates   int
	Confirmed    int
	Merged       int
	DroppedTests int
	Unconfirmed  int
}

// Options configure a verification run.
type Options struct {
	// Dirs maps a repository URL to its checked-out working tree.
	Dirs map[string]string
	// DropInTests lists rule ids whose candidates are dropped in test code
	// instead of being demoted.
	DropInTests map[string]bool
}

var testPath = regexp.MustCompile(`(?i)(^|/)(tests?|__tests__|spec|specs|testdata|test_data|examples?|samples?|fixtures?|mocks?|demos?)(/|$)|_test\.go$|\.(test|spec)\.[cm]?[jt]sx?$|(^|/)test_[^/]*\.py$|_test\.py$|Tests?\.java$|(^|/)conftest\.py$|Test\.php$|_(spec|test)\.rb$`)

// IsTestPath reports whether a repository-relative path is test or example code.
func IsTestPath(p string) bool { return testPath.MatchString(p) }

// Run verifies candidates. Fingerprints must already be set.
func Run(ctx context.Context, cands []finding.Finding, opt Options) ([]finding.Finding, Stats) {
	st := Stats{Candidates: len(cands)}
	files := map[string][]string{}
	var kept []finding.Finding
	for _, c := range cands {
		if ctx.Err() != nil {
			break
		}
		if c.Reproduce != nil {
			c.Confirmed = c.Reproduce()
			c.Reproduce = nil
			kept = append(kept, c)
			continue
		}
		if IsTestPath(c.AffectedFile) {
			if opt.DropInTests[c.RuleID] {
				st.DroppedTests++
				continue
			}
			c.Severity = finding.Lower(c.Severity)
			c.Tags = append(c.Tags, "test-code")
		}
		c.Confirmed = locationExists(files, opt.Dirs[c.RepoURL], c)
		kept = append(kept, c)
	}
	out := merge(kept, &st)
	for _, f := range out {
		if f.Confirmed {
			st.Confirmed++
		} else {
			st.Unconfirmed++
		}
	}
	return out, st
}

// locationExists checks that the file is a regular file inside the working
// tree at the scanned commit and that the reported lines are still there.
func locationExists(cache map[string][]string, dir string, c finding.Finding) bool {
	if dir == "" || c.AffectedFile == "" || c.StartLine < 1 {
		return false
	}
	key := dir + "\x00" + c.AffectedFile
	lines, ok := cache[key]
	if !ok {
		full := filepath.Join(dir, filepath.FromSlash(c.AffectedFile))
		rel, err := filepath.Rel(dir, full)
		if err != nil || strings.HasPrefix(rel, "..") {
			return false
		}
		fi, err := os.Lstat(full)
		if err != nil || !fi.Mode().IsRegular() {
			cache[key] = nil
			return false
		}
		data, err := os.ReadFile(full)
		if err != nil {
			cache[key] = nil
			return false
		}
		lines = strings.Split(string(data), "\n")
		cache[key] = lines
	}
	if lines == nil || c.EndLine > len(lines) || c.StartLine > len(lines) {
		return false
	}
	if c.Category == "secrets" {
		return true // the snippet is redacted; the range check is what we can do
	}
	want := finding.NormalizeCode(lines[c.StartLine-1])
	if want == "" {
		return true
	}
	if len(want) > 200 {
		want = want[:200]
	}
	return strings.Contains(finding.NormalizeCode(c.AffectedCode), want)
}

// merge folds candidates with the same fingerprint, and secrets reported by
// more than one detector at the same place, into one finding.
func merge(in []finding.Finding, st *Stats) []finding.Finding {
	byKey := map[string]int{}
	var out []finding.Finding
	for _, c := range in {
		keys := []string{"fp:" + c.Fingerprint}
		if c.Category == "secrets" {
			keys = append(keys, "secret:"+c.RepoURL+"\x00"+c.AffectedFile+"\x00"+strconv.Itoa(c.StartLine))
		}
		idx := -1
		for _, k := range keys {
			if i, ok := byKey[k]; ok {
				idx = i
				break
			}
		}
		if idx < 0 {
			out = append(out, c)
			for _, k := range keys {
				byKey[k] = len(out) - 1
			}
			continue
		}
		st.Merged++
		m := &out[idx]
		if finding.SeverityRank(c.Severity) < finding.SeverityRank(m.Severity) {
			m.Severity = c.Severity
		}
		if m.MermaidTrace == nil && c.MermaidTrace != nil {
			m.MermaidTrace = c.MermaidTrace
		}
		if m.ProofOfConcept == nil && c.ProofOfConcept != nil {
			m.ProofOfConcept = c.ProofOfConcept
		}
		m.Confirmed = m.Confirmed || c.Confirmed
		m.Tags = union(m.Tags, c.Tags)
		for _, k := range keys {
			byKey[k] = idx
		}
	}
	return out
}

func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]string{}, a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
