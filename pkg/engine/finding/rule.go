package finding

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Rule is the metadata of one check, whichever analyzer runs it: code
// rules (loaded from YAML, hence the tags), configuration checks and
// live-target checks. Every finding of a rule carries it.
type Rule struct {
	ID       string `yaml:"id"`
	Title    string `yaml:"title"`
	Class    string `yaml:"class,omitempty"` // the taint class of a code rule ("sqli"), empty otherwise
	Category string `yaml:"category"`        // a vocab.Category
	Severity string `yaml:"severity"`        // a vocab.Severity
	CWE      string `yaml:"cwe"`
	OWASP    string `yaml:"owasp"` // an OWASP Top 10 2021 category
	// Description explains the risk and the fix; it becomes the finding's.
	Description string `yaml:"description"`
	// DropInTests: findings of the rule in test code are dropped.
	DropInTests bool `yaml:"drop_in_tests,omitempty"`
	// Languages the rule applies to and Taint (it is a dataflow rule) are
	// derived when a code rule is loaded.
	Languages []string `yaml:"-"`
	Taint     bool     `yaml:"-"`
}

// RuleSet is a set of rules by ID.
type RuleSet map[string]Rule

// MustLoadRules reads a YAML list of rules, in the form of the code rule
// files (id, title, category, severity, cwe, owasp, description). It is
// for the rule data a package embeds: data that does not parse, or a rule
// without an ID or listed twice, is a defect of the build and panics.
func MustLoadRules(data []byte) RuleSet {
	var list []Rule
	if err := yaml.Unmarshal(data, &list); err != nil {
		panic(fmt.Sprintf("finding: rule data: %v", err))
	}
	set := make(RuleSet, len(list))
	for _, r := range list {
		if _, dup := set[r.ID]; dup || r.ID == "" {
			panic(fmt.Sprintf("finding: rule data: missing or repeated id %q", r.ID))
		}
		set[r.ID] = r
	}
	return set
}

// Get returns the rule id. An id the set lacks is a defect of the calling
// analyzer and panics, so that its tests find it.
func (s RuleSet) Get(id string) Rule {
	r, ok := s[id]
	if !ok {
		panic("finding: unknown rule " + id)
	}
	return r
}

// Finding starts a finding of r in file: the rule's id, title, category,
// severity and description, and the tags naming the rule, its CWE, its
// OWASP category and kind (the language, or "live" for a live target).
// The analyzer adds the location, the snippet and the fingerprint key.
func (r Rule) Finding(file, kind string) Finding {
	return Finding{
		RuleID:       r.ID,
		Title:        r.Title,
		Category:     r.Category,
		Severity:     r.Severity,
		Description:  strings.TrimSpace(r.Description),
		AffectedFile: file,
		Tags:         []string{r.ID, r.CWE, r.OWASP, kind},
	}
}

// SnippetLineMax is how many characters of one line a snippet keeps: a
// longer line (minified code, embedded data) is cut at a character boundary
// and ends with "…", so that a finding never stores a whole bundle.
const SnippetLineMax = 300

// Snippet returns the lines from to to (0-based, inclusive, clamped to the
// file) joined by newlines, without carriage returns, each cut to
// SnippetLineMax characters. It is the AffectedCode of every finding that
// points into a file; callers choose the context lines around the match.
func Snippet(lines []string, from, to int) string {
	from, to = max(from, 0), min(to, len(lines)-1)
	var b strings.Builder
	for i := from; i <= to; i++ {
		b.WriteString(cutLine(strings.TrimRight(lines[i], "\r")))
		if i < to {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func cutLine(l string) string {
	if utf8.RuneCountInString(l) <= SnippetLineMax {
		return l
	}
	n := 0
	for i := range l {
		if n == SnippetLineMax {
			return l[:i] + "…"
		}
		n++
	}
	return l
}
