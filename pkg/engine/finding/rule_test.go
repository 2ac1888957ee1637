package finding_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
)

const ruleData = `
- id: demo.one
  title: First
  category: injection
  severity: high
  cwe: CWE-89
  owasp: A03:2021-Injection
  description: |
    Explains the risk.
- id: demo.two
  title: Second
  class: xss
  category: xss
  severity: low
  cwe: CWE-79
  owasp: A03:2021-Injection
  description: Short.
  drop_in_tests: true
`

func TestMustLoadRules(t *testing.T) {
	t.Parallel()
	set := finding.MustLoadRules([]byte(ruleData))
	require.Len(t, set, 2)
	one := set.Get("demo.one")
	require.Equal(t, finding.Rule{ID: "demo.one", Title: "First", Category: "injection", Severity: "high", CWE: "CWE-89",
		OWASP: "A03:2021-Injection", Description: "Explains the risk.\n"}, one)
	two := set.Get("demo.two")
	require.Equal(t, "xss", two.Class)
	require.True(t, two.DropInTests)
	require.Nil(t, two.Languages, "languages are derived by the loader of code rules")
	require.False(t, two.Taint)

	require.Empty(t, finding.MustLoadRules([]byte("[]")))
	require.Empty(t, finding.MustLoadRules(nil))
}

func TestMustLoadRulesPanicsOnDefects(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"malformed":   "- id: [",
		"not a list":  "id: x\n",
		"missing id":  "- title: no id\n",
		"repeated id": "- id: a\n- id: b\n- id: a\n",
		"wrong type":  "- id: a\n  severity: [high, low]\n",
	}
	for name, data := range cases {
		require.Panics(t, func() { finding.MustLoadRules([]byte(data)) }, name)
	}
}

func TestRuleSetGetUnknownPanics(t *testing.T) {
	t.Parallel()
	set := finding.MustLoadRules([]byte(ruleData))
	require.PanicsWithValue(t, "finding: unknown rule demo.three", func() { set.Get("demo.three") })
	var empty finding.RuleSet
	require.Panics(t, func() { empty.Get("x") })
}

func TestRuleFinding(t *testing.T) {
	t.Parallel()
	r := finding.Rule{ID: "k8s.x", Title: "T", Category: "misconfiguration", Severity: "medium", CWE: "CWE-250",
		OWASP: "A05:2021-Security Misconfiguration", Description: "\n  Risk and fix.  \n"}
	f := r.Finding("deploy/pod.yaml", "kubernetes")
	require.Equal(t, finding.Finding{
		RuleID: "k8s.x", Title: "T", Category: "misconfiguration", Severity: "medium", Description: "Risk and fix.",
		AffectedFile: "deploy/pod.yaml", Tags: []string{"k8s.x", "CWE-250", "A05:2021-Security Misconfiguration", "kubernetes"},
	}, f)
	require.Zero(t, f.StartLine, "the analyzer sets the location")
	require.Empty(t, f.FingerprintKey)
}

func TestSnippet(t *testing.T) {
	t.Parallel()
	lines := []string{"zero", "one\r", "two", "three"}
	cases := []struct {
		name     string
		from, to int
		want     string
	}{
		{"one line", 2, 2, "two"},
		{"a range", 0, 2, "zero\none\ntwo"},
		{"carriage returns dropped", 1, 1, "one"},
		{"clamped below", -3, 0, "zero"},
		{"clamped above", 2, 99, "two\nthree"},
		{"whole file", -1, 99, "zero\none\ntwo\nthree"},
		{"empty range", 3, 2, ""},
		{"past the end", 7, 9, ""},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, finding.Snippet(lines, tc.from, tc.to), tc.name)
	}
	require.Empty(t, finding.Snippet(nil, 0, 3))
}

func TestSnippetCutsLongLines(t *testing.T) {
	t.Parallel()
	exact := strings.Repeat("a", finding.SnippetLineMax)
	require.Equal(t, exact, finding.Snippet([]string{exact}, 0, 0), "a line of the limit is kept whole")

	long := strings.Repeat("é", finding.SnippetLineMax+50)
	got := finding.Snippet([]string{long, "next"}, 0, 1)
	first, second, ok := strings.Cut(got, "\n")
	require.True(t, ok)
	require.Equal(t, "next", second)
	require.True(t, utf8.ValidString(first), "cut at a character boundary")
	require.True(t, strings.HasSuffix(first, "…"))
	require.Equal(t, finding.SnippetLineMax+1, utf8.RuneCountInString(first), "the limit's characters and the ellipsis")
}
