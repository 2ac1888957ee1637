// Package verify is the automated verification stage of the scan engine. It
// decides, for every candidate, how confident we are that it is a real,
// actionable flaw, and says why. The location must exist in the scanned tree,
// duplicates are merged, candidates in test or example code are demoted (or
// dropped, for rules that ask so), and live-target candidates are reproduced
// with a second request.
//
// # Confidence policy
//
// Every candidate gets a confidence, high, medium or low, and Reasons: short
// sentences naming what supports it and what weakens it. Only high is
// "confirmed": in an organization whose verification mode is auto, high
// findings are approved at once and the others stay in verification for an
// operator, who sees the confidence and the reasons.
//
// High, when nothing below lowers it:
//   - a complete dataflow path from untrusted request data (a parameter of an
//     entry point, or a request source of a known type) to a sink matched on
//     its receiver's type or qualified name; a weak random value reaching
//     such a sink counts too;
//   - a constant weak value (algorithm name, possibly read from
//     configuration) or an insecure property at a target of known type;
//   - a secret whose format checks out: a private key block with a random
//     body, or a token of a provider format (AWS, GitHub and npm with their
//     checksum, GitLab, Slack, Stripe live, Google, SendGrid, PyPI);
//   - a setting read from a parsed configuration file (Dockerfile, Terraform,
//     Kubernetes, CI workflow);
//   - a live-target result reproduced by a second request.
//
// Medium:
//   - a flow into a sink matched on a method name alone (receiver type
//     unknown), or from a source that is not request data (environment,
//     command line, files) in code no entry point reaches;
//   - a constant or property rule whose target's type is unknown;
//   - a syntactic pattern match (no flow or type established);
//   - a secret found by its name and randomness only (no checkable format),
//     or an encrypted private key.
//
// Low, whatever the evidence:
//   - test, example, sample, fixture or documentation code;
//   - a secret that looks like a placeholder or sample value (example,
//     dummy, changeme, repeated or sequential characters, low entropy);
//   - a reported location that does not exist at the scanned commit;
//   - a live-target result a second request did not reproduce.
package verify

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// Confidence levels.
const (
	High   = "high"
	Medium = "medium"
	Low    = "low"
)

// Rank orders confidence levels: 2 for high, 1 for medium, 0 for low or unknown.
func Rank(c string) int {
	switch c {
	case High:
		return 2
	case Medium:
		return 1
	}
	return 0
}

// Stats counts what the stage did.
type Stats struct {
	Candidates   int
	Confirmed    int // confidence high: approved by automated verification
	Merged       int
	DroppedTests int
	Unconfirmed  int // medium or low: held for an operator
	Medium, Low  int
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

var docPath = regexp.MustCompile(`(?i)(^|/)(docs?|documentation|site-docs)/|\.(md|markdown|mdx|rst|adoc|asciidoc|txt|rdoc)$|(^|/)(readme|changelog|contributing)(\.[^/]*)?$`)

// IsDocPath reports whether a repository-relative path is documentation.
func IsDocPath(p string) bool { return docPath.MatchString(p) }

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
			ok := c.Reproduce()
			c.Reproduce = nil
			c.Confidence, c.Reasons = AssessLive(ok)
			c.Confirmed = c.Confidence == High
			kept = append(kept, c)
			continue
		}
		if IsTestPath(c.AffectedFile) {
			if opt.DropInTests[c.RuleID] {
				st.DroppedTests++
				continue
			}
			c.Severity = string(vocab.Severity(c.Severity).Lower())
			c.Tags = append(c.Tags, "test-code")
		}
		lines := fileLines(files, opt.Dirs[c.RepoURL], c.AffectedFile)
		located := locationExists(lines, c)
		c.Confidence, c.Reasons = Assess(c, located, lines)
		c.Confirmed = c.Confidence == High
		kept = append(kept, c)
	}
	out := merge(kept, &st)
	for _, f := range out {
		switch f.Confidence {
		case High:
			st.Confirmed++
		case Medium:
			st.Medium++
		default:
			st.Low++
		}
		if !f.Confirmed {
			st.Unconfirmed++
		}
	}
	return out, st
}

// AssessLive rates a live-target candidate by its reproduction.
func AssessLive(reproduced bool) (string, []string) {
	if reproduced {
		return High, []string{"Reproduced against the live target with a second request."}
	}
	return Low, []string{"A second request to the live target did not reproduce it."}
}

var configLanguages = map[string]string{"dockerfile": "Dockerfile", "terraform": "Terraform", "kubernetes": "Kubernetes manifest",
	"github-actions": "CI workflow"}

// Assess rates a code, configuration or secret candidate. located says
// whether the reported location exists in the scanned tree; lines is the
// file's content (nil when it could not be read), used to check secrets.
func Assess(c finding.Finding, located bool, lines []string) (string, []string) {
	var level string
	var reasons []string
	ev := c.Evidence
	switch {
	case c.Category == "secrets" && strings.HasPrefix(c.RuleID, "secrets."):
		level, reasons = assessSecret(c, lines)
	case ev.Flow:
		level, reasons = assessFlow(ev)
	case ev.Constant, ev.Property:
		what := "A constant weak value (such as an algorithm name, possibly read from configuration) is used"
		if ev.Property {
			what = "An insecure setting, or a missing one, was established on the object"
		}
		if ev.TypedSink {
			level, reasons = High, []string{what + "; the target is identified by its type."}
		} else {
			level, reasons = Medium, []string{what + ", but the target is matched by name only; its type is unknown."}
		}
	case configLanguages[c.Language] != "":
		level, reasons = High, []string{"The setting was read from the parsed " + configLanguages[c.Language] + "."}
	default:
		level, reasons = Medium, []string{"Matched by a syntactic pattern only; no dataflow or type information supports it."}
	}
	switch {
	case !located:
		level = Low
		reasons = append(reasons, "The reported location was not found in the scanned tree.")
	case IsTestPath(c.AffectedFile):
		level = Low
		reasons = append(reasons, "It is in test, example or fixture code.")
	case IsDocPath(c.AffectedFile):
		level = Low
		reasons = append(reasons, "It is in documentation.")
	default:
		reasons = append(reasons, "It is in application code, not in tests, examples or documentation.")
	}
	return level, reasons
}

// sourceKind is the kind of a flow's source as the dataflow analysis names
// it ("remote input from request.args.get" → "remote").
func sourceKind(src string) string {
	k, _, _ := strings.Cut(strings.TrimSpace(src), " ")
	return k
}

func assessFlow(ev finding.Evidence) (string, []string) {
	kind := sourceKind(ev.Source)
	src := strings.TrimSpace(ev.Source)
	steps := ""
	if ev.Steps > 0 {
		steps = " (" + strconv.Itoa(ev.Steps) + " steps)"
	}
	var reasons []string
	switch kind {
	case "remote":
		reasons = append(reasons, "Untrusted request data ("+src+") reaches the sink along a complete dataflow path"+steps+".")
	case "weakrand":
		reasons = append(reasons, "A weak random value ("+src+") reaches a security-sensitive use along a complete dataflow path"+steps+".")
	case "":
		reasons = append(reasons, "Data reaches the sink along a complete dataflow path"+steps+".")
	default:
		reasons = append(reasons, "Data from "+src+" reaches the sink"+steps+"; it is not request data.")
	}
	reasons = append(reasons, "No sanitizer is on the reported path.")
	if ev.EntryPoint != "" {
		reasons = append(reasons, "The code is reachable from a "+ev.EntryPoint+" entry point.")
	} else {
		reasons = append(reasons, "No known entry point reaches this code.")
	}
	if !ev.TypedSink {
		return Medium, append(reasons, "The sink is matched by method name only; its receiver's type is unknown.")
	}
	reasons = append(reasons, "The sink is identified by its receiver's type or qualified name.")
	switch {
	case kind == "remote", kind == "weakrand":
		return High, reasons
	case kind == "" && ev.EntryPoint != "":
		return High, reasons
	}
	return Medium, reasons
}

// fileLines reads a repository file once per run (nil when it is missing,
// outside the tree or not a regular file).
func fileLines(cache map[string][]string, dir, file string) []string {
	if dir == "" || file == "" {
		return nil
	}
	key := dir + "\x00" + file
	if lines, ok := cache[key]; ok {
		return lines
	}
	full := filepath.Join(dir, filepath.FromSlash(file))
	rel, err := filepath.Rel(dir, full)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	cache[key] = nil
	fi, err := os.Lstat(full)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return nil
	}
	lines := strings.Split(string(data), "\n")
	cache[key] = lines
	return lines
}

// locationExists checks that the file is a regular file inside the working
// tree at the scanned commit and that the reported lines are still there.
func locationExists(lines []string, c finding.Finding) bool {
	if c.StartLine < 1 || lines == nil || c.EndLine > len(lines) || c.StartLine > len(lines) {
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
// more than one detector at the same place, into one finding. The merged
// finding keeps the highest confidence and its reasons.
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
		if vocab.Severity(c.Severity).Rank() > vocab.Severity(m.Severity).Rank() {
			m.Severity = c.Severity
		}
		if m.MermaidTrace == nil && c.MermaidTrace != nil {
			m.MermaidTrace = c.MermaidTrace
		}
		if m.ProofOfConcept == nil && c.ProofOfConcept != nil {
			m.ProofOfConcept = c.ProofOfConcept
		}
		switch {
		case Rank(c.Confidence) > Rank(m.Confidence):
			m.Confidence, m.Reasons = c.Confidence, c.Reasons
		case Rank(c.Confidence) == Rank(m.Confidence):
			m.Reasons = union(m.Reasons, c.Reasons)
		}
		m.Confirmed = m.Confidence == High
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
