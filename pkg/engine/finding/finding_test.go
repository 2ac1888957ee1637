package finding_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
)

func TestNormalizeCode(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"", ""},
		{"   \t\n ", ""},
		{"x", "x"},
		{"  db.query( q )  ", "db.query( q )"},
		{"a\n\tb\r\n  c", "a b c"},
		{"a  b", "a b"},
		{"é  ñ", "é ñ"},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, finding.NormalizeCode(tc.in), "%q", tc.in)
	}
}

func TestNormalizeCodeIgnoresReindentation(t *testing.T) {
	t.Parallel()
	a := "if x {\n\tdb.Query(q)\n}"
	b := "if x {\n        db.Query(q)\n    }"
	require.Equal(t, finding.NormalizeCode(a), finding.NormalizeCode(b))
}

var hex40 = regexp.MustCompile(`^[0-9a-f]{40}$`)

func TestComputeFingerprint(t *testing.T) {
	t.Parallel()
	base := finding.ComputeFingerprint("sqli", "https://x/r", "a.go", "k")
	require.Regexp(t, hex40, base)
	require.Equal(t, base, finding.ComputeFingerprint("sqli", "https://x/r", "a.go", "k"), "deterministic")

	differ := []struct {
		name                  string
		rule, repo, file, key string
	}{
		{"rule", "xss", "https://x/r", "a.go", "k"},
		{"repository", "sqli", "https://x/s", "a.go", "k"},
		{"file", "sqli", "https://x/r", "b.go", "k"},
		{"key", "sqli", "https://x/r", "a.go", "k2"},
		// The parts are separated: moving characters between them changes the hash.
		{"boundary rule/repo", "sqlih", "ttps://x/r", "a.go", "k"},
		{"boundary file/key", "sqli", "https://x/r", "a.g", "ok"},
		{"empty key", "sqli", "https://x/r", "a.go", ""},
	}
	seen := map[string]string{base: "base"}
	for _, d := range differ {
		fp := finding.ComputeFingerprint(d.rule, d.repo, d.file, d.key)
		require.Regexp(t, hex40, fp)
		require.NotContains(t, seen, fp, "changing the %s changes the fingerprint", d.name)
		seen[fp] = d.name
	}
}

func TestComputeFingerprintEmptyParts(t *testing.T) {
	t.Parallel()
	a := finding.ComputeFingerprint("", "", "", "")
	require.Regexp(t, hex40, a)
	require.NotEqual(t, a, finding.ComputeFingerprint("", "", "", "x"))
	require.NotEqual(t, finding.ComputeFingerprint("a", "", "", ""), finding.ComputeFingerprint("", "a", "", ""))
}

func TestRedact(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"", "********"},
		{"a", "********"},
		{"abc", "********"},
		{"abcd", "a********"},
		{"abcdefg", "a********"},
		{"abcdefgh", "ab********"},
		{"abcdefghi", "abcd********"},
		{"AKIAIOSFODNN7EXAMPLE", "AKIA********"},
		{"ñandúñandú", "ñand********"},
		{"ééé", "********"},
	}
	for _, tc := range cases {
		got := finding.Redact(tc.in)
		require.Equal(t, tc.want, got, "%q", tc.in)
	}
}

func TestRedactNeverRevealsMoreThanHalf(t *testing.T) {
	t.Parallel()
	for n := 0; n <= 40; n++ {
		secret := strings.Repeat("s", n)
		got := finding.Redact(secret)
		require.True(t, strings.HasSuffix(got, "********"))
		shown := len(got) - 8
		require.LessOrEqual(t, shown, 4)
		require.LessOrEqual(t, shown*2, max(n, 0))
	}
}

func TestReportTags(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		f    finding.Finding
		want []string
	}{
		{"no confidence keeps tags", finding.Finding{Tags: []string{"a", "confidence:low"}}, []string{"a", "confidence:low"}},
		{"no tags no confidence", finding.Finding{}, nil},
		{"confidence appended", finding.Finding{Tags: []string{"rule:x", "cwe:89"}, Confidence: "high"}, []string{"rule:x", "cwe:89", "confidence:high"}},
		{"stale confidence replaced", finding.Finding{Tags: []string{"confidence:low", "x", "confidence:medium"}, Confidence: "high"}, []string{"x", "confidence:high"}},
		{"confidence only", finding.Finding{Confidence: "medium"}, []string{"confidence:medium"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, finding.ReportTags(tc.f))
		})
	}
}

func TestReportTagsDoesNotModifyFinding(t *testing.T) {
	t.Parallel()
	tags := make([]string, 2, 8)
	tags[0], tags[1] = "a", "confidence:low"
	f := finding.Finding{Tags: tags, Confidence: "high"}
	got := finding.ReportTags(f)
	require.Equal(t, []string{"a", "confidence:high"}, got)
	require.Equal(t, []string{"a", "confidence:low"}, f.Tags)
}

func TestReportDescription(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		f    finding.Finding
		want string
	}{
		{"no confidence", finding.Finding{Description: "desc\n", Reasons: []string{"r"}}, "desc\n"},
		{"reasons listed", finding.Finding{Description: "SQL built from input.", Confidence: "high", Reasons: []string{"a flow", "typed sink"}},
			"SQL built from input.\n\nWhy we report this (confidence: high):\n- a flow\n- typed sink"},
		{"trailing blanks trimmed", finding.Finding{Description: "d \n\n", Confidence: "low"}, "d\n\nWhy we report this (confidence: low):"},
		{"empty description", finding.Finding{Confidence: "medium", Reasons: []string{"x"}}, "Why we report this (confidence: medium):\n- x"},
		{"reason whitespace collapsed", finding.Finding{Description: "d", Confidence: "high", Reasons: []string{"  two\nlines\t here "}},
			"d\n\nWhy we report this (confidence: high):\n- two lines here"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := finding.ReportDescription(tc.f)
			require.Equal(t, tc.want, got)
			if tc.f.Confidence != "" {
				require.Contains(t, got, finding.WhyHeading+tc.f.Confidence)
			}
		})
	}
}
