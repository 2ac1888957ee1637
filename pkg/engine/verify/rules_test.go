package verify

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
)

// randomish returns n characters of alphabet from a fixed seed, so that a
// test's tokens are the same on every run.
func randomish(t *testing.T, seed uint64, n int, alphabet string) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	require.Empty(t, placeholderValue(string(b)), "seed %d makes a placeholder-looking value", seed)
	return string(b)
}

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	digits = "0123456789"
)

// assessLine rates a secret reported on the only line of a file.
func assessLine(line string) (string, []string) {
	f := finding.Finding{RuleID: "secrets.generic", Category: "secrets", AffectedFile: "app/config.py", StartLine: 1, EndLine: 1}
	return Assess(f, true, []string{line})
}

// Each provider format: a token of that format is high with the format's
// name; the same token one character short (or with a wrong checksum) is
// not recognized as that provider's.
func TestTokenFormats(t *testing.T) {
	t.Parallel()
	r := func(seed uint64, n int, alphabet string) string { return randomish(t, seed, n, alphabet) }
	gh := githubToken(true)
	for _, tc := range []struct {
		name, format string
		valid, miss  string
		missLevel    string
	}{
		{"AWS", "an AWS access key id", "AKIA" + r(1, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"), "AKIA" + r(1, 15, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"), Medium},
		{"GitHub fine-grained", "a GitHub fine-grained token", "github_pat_" + r(2, 22, alnum) + "_" + r(3, 59, alnum), "github_pat_" + r(2, 22, alnum) + "_" + r(3, 58, alnum), Medium},
		{"npm", "an npm token", "npm_" + strings.TrimPrefix(gh, "ghp_"), "npm_" + strings.TrimPrefix(githubToken(false), "ghp_"), Low},
		{"GitLab", "a GitLab token", "glpat-" + r(4, 20, alnum), "glpat-" + r(4, 19, alnum), Medium},
		{"Slack token", "a Slack token", "xoxb-" + r(5, 10, "3456789") + "-" + r(6, 24, alnum), "xoxb-" + r(5, 7, "3456789") + "-" + r(6, 24, alnum), Medium},
		{"Slack webhook", "a Slack webhook", "https://hooks.slack.com/services/T" + r(7, 8, upper) + "/B" + r(8, 8, upper) + "/" + r(9, 24, alnum),
			"https://hooks.slack.com/services/T" + r(7, 8, upper) + "/B" + r(8, 8, upper) + "/" + r(9, 19, alnum), Medium},
		{"Stripe restricted", "a Stripe live key", "rk_live_" + r(10, 24, alnum), "rk_test_" + r(10, 24, alnum), Medium},
		{"Google", "a Google API key", "AIza" + r(11, 35, alnum), "AIza" + r(11, 34, alnum), Medium},
		{"SendGrid", "a SendGrid key", "SG." + r(12, 22, alnum) + "." + r(13, 43, alnum), "SG." + r(12, 22, alnum) + "." + r(13, 42, alnum), Medium},
		{"PyPI", "a PyPI token", "pypi-AgEIcHlwaS5vcmc" + r(14, 60, alnum), "pypi-AgEIcHlwaS5vcmc" + r(14, 49, alnum), Medium},
	} {
		level, reasons := assessLine(`TOKEN = "` + tc.valid + `"`)
		require.Equal(t, High, level, "%s: %q", tc.name, reasons)
		require.Contains(t, reasons[0], tc.format, tc.name)
		level, reasons = assessLine(`TOKEN = "` + tc.miss + `"`)
		require.Equal(t, tc.missLevel, level, "%s near miss: %q", tc.name, reasons)
		require.NotContains(t, reasons[0], "Secret format checked", tc.name)
		for _, why := range reasons {
			require.NotContains(t, why, tc.valid[len(tc.valid)-12:], "a reason never quotes the value")
		}
	}
}

func TestPlaceholderValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, why string }{
		{"Zx8vQ2mR7kP4nT9w", ""},
		{"my-EXAMPLE-token-value", `contains "example"`},
		{"{{ secrets.TOKEN }}", `contains "{{"`},
		{"<your token here>", `contains "<your token here>"`},
		{"set_YOUR_API_KEY", `contains "your_"`},
		{"<api key>", `contains "<api key>"`},
		{"aZ9000000kQ", "repeats one character"},
		{"aZ900000kQ", ""},
		{"pre0123456post", "counting sequence"},
		{"QWERTYkey8Zp", "keyboard"},
		{"abababababababab", "not random enough"},
		{"abababababababa", ""}, // too short to judge by randomness
	} {
		got := placeholderValue(tc.in)
		if tc.why == "" {
			require.Empty(t, got, tc.in)
			continue
		}
		require.Contains(t, got, tc.why, tc.in)
	}
}

func TestPrivateKeyBlocks(t *testing.T) {
	t.Parallel()
	short := "-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END PRIVATE KEY-----"
	flat := "-----BEGIN PRIVATE KEY-----\n" + strings.Repeat("QUJD", 40) + "\n-----END PRIVATE KEY-----"
	redacted := "-----BEGIN OPENSSH PRIVATE KEY-----\n<REDACTED>\n-----END OPENSSH PRIVATE KEY-----"
	for _, tc := range []struct {
		name, block, level, reason string
	}{
		{"too short", short, Low, "too short"},
		{"not random", flat, Low, "not random enough"},
		{"redacted", redacted, Low, "elided or redacted"},
	} {
		lines := strings.Split(tc.block, "\n")
		f := finding.Finding{RuleID: "secrets.private-key", Category: "secrets", AffectedFile: "deploy/key.pem", StartLine: 1, EndLine: 1}
		level, reasons := Assess(f, true, lines)
		require.Equal(t, tc.level, level, tc.name)
		require.Contains(t, reasons[0], tc.reason, tc.name)
	}
	// The block is read through its END line even when only BEGIN is reported.
	key := privateKeyPEM(t)
	lines := strings.Split("x = 1\n"+key, "\n")
	require.Contains(t, secretText(finding.Finding{StartLine: 2, EndLine: 2}, lines), "-----END RSA PRIVATE KEY-----")
	require.Empty(t, secretText(finding.Finding{StartLine: 0}, lines))
	require.Empty(t, secretText(finding.Finding{StartLine: len(lines) + 1}, lines))
}

// A category "secrets" finding goes to the secret rules only when its rule
// is a secrets rule; otherwise it is rated by its evidence.
func TestSecretRulesNeedASecretsRule(t *testing.T) {
	t.Parallel()
	lines := []string{`TOKEN = "` + githubToken(true) + `"`}
	level, _ := Assess(finding.Finding{RuleID: "secrets.github", Category: "secrets", AffectedFile: "a.py", StartLine: 1, EndLine: 1}, true, lines)
	require.Equal(t, High, level)
	level, reasons := Assess(finding.Finding{RuleID: "sast.hardcoded", Category: "secrets", AffectedFile: "a.py", StartLine: 1, EndLine: 1}, true, lines)
	require.Equal(t, Medium, level)
	require.Contains(t, reasons[0], "syntactic pattern")
}

func TestLocationExists(t *testing.T) {
	t.Parallel()
	lines := []string{"package main", "", "\tos.Exec(userInput)  // run", "}"}
	for _, tc := range []struct {
		name string
		f    finding.Finding
		want bool
	}{
		{"code at the line", finding.Finding{StartLine: 3, EndLine: 3, AffectedCode: "os.Exec(userInput) // run"}, true},
		{"code with other whitespace", finding.Finding{StartLine: 3, EndLine: 3, AffectedCode: "  os.Exec(userInput)\t// run  "}, true},
		{"code elsewhere", finding.Finding{StartLine: 1, EndLine: 1, AffectedCode: "os.Exec(userInput)"}, false},
		{"blank line accepts any code", finding.Finding{StartLine: 2, EndLine: 2, AffectedCode: "whatever"}, true},
		{"line zero", finding.Finding{StartLine: 0, EndLine: 0, AffectedCode: "package main"}, false},
		{"start past the end", finding.Finding{StartLine: 5, EndLine: 5}, false},
		{"end past the end", finding.Finding{StartLine: 3, EndLine: 9, AffectedCode: "os.Exec(userInput) // run"}, false},
		{"secret: the range is enough", finding.Finding{Category: "secrets", StartLine: 4, EndLine: 4, AffectedCode: "REDACTED"}, true},
		{"secret outside the file", finding.Finding{Category: "secrets", StartLine: 4, EndLine: 5}, false},
	} {
		require.Equal(t, tc.want, locationExists(lines, tc.f), tc.name)
	}
	require.False(t, locationExists(nil, finding.Finding{StartLine: 1, EndLine: 1}), "unreadable file")
}

// fileLines reads only regular files inside the tree.
func TestFileLinesStaysInTheTree(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	require.NoError(t, os.MkdirAll(filepath.Join(tree, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(tree, "a.go"), []byte("one\ntwo"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "outside.go"), []byte("secret"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(root, "outside.go"), filepath.Join(tree, "link.go")))
	cache := map[string][]string{}
	for _, tc := range []struct {
		dir, file string
		want      []string
	}{
		{tree, "a.go", []string{"one", "two"}},
		{tree, "../outside.go", nil},
		{tree, "sub/../../outside.go", nil},
		{tree, "link.go", nil},
		{tree, "sub", nil},
		{tree, "missing.go", nil},
		{"", "a.go", nil},
		{tree, "", nil},
	} {
		require.Equal(t, tc.want, fileLines(cache, tc.dir, tc.file), "%s %s", tc.dir, tc.file)
	}
	// Read once per run: a change on disk is not seen again.
	require.NoError(t, os.WriteFile(filepath.Join(tree, "a.go"), []byte("changed"), 0o644))
	require.Equal(t, []string{"one", "two"}, fileLines(cache, tree, "a.go"))
}

func TestRank(t *testing.T) {
	t.Parallel()
	require.Equal(t, []int{2, 1, 0, 0}, []int{Rank(High), Rank(Medium), Rank(Low), Rank("bogus")})
}

// Two detectors reporting a secret at the same place merge even with
// different fingerprints; the merged finding keeps a proof and a trace any
// of them had, and equal confidences pool their reasons.
func TestMergeSecretsByLocation(t *testing.T) {
	t.Parallel()
	poc, trace := "curl -H ...", "graph LR"
	a := finding.Finding{Fingerprint: "a", Category: "secrets", RepoURL: "r", AffectedFile: "f.py", StartLine: 3, Severity: "high",
		Confidence: Medium, Reasons: []string{"m1"}, Tags: []string{"x"}}
	b := a
	b.Fingerprint, b.Reasons, b.Tags, b.ProofOfConcept, b.MermaidTrace = "b", []string{"m2"}, []string{"y"}, &poc, &trace
	otherLine := a
	otherLine.Fingerprint, otherLine.StartLine = "c", 4
	notSecret := a
	notSecret.Fingerprint, notSecret.Category = "d", "injection"
	var st Stats
	out := merge([]finding.Finding{a, b, otherLine, notSecret}, &st)
	require.Len(t, out, 3)
	require.Equal(t, 1, st.Merged)
	require.Equal(t, "a", out[0].Fingerprint)
	require.Equal(t, []string{"m1", "m2"}, out[0].Reasons)
	require.Equal(t, []string{"x", "y"}, out[0].Tags)
	require.Same(t, &poc, out[0].ProofOfConcept)
	require.Same(t, &trace, out[0].MermaidTrace)
	require.False(t, out[0].Confirmed)
}

// A cancelled run stops verifying: what is left is not reported.
func TestRunStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	live := func() bool { calls++; cancel(); return true }
	out, st := Run(ctx, []finding.Finding{
		{Fingerprint: "1", Reproduce: live}, {Fingerprint: "2", Reproduce: live},
	}, Options{})
	require.Equal(t, 1, calls)
	require.Len(t, out, 1)
	require.Equal(t, 2, st.Candidates)
	require.Equal(t, 1, st.Confirmed)
	require.Nil(t, out[0].Reproduce, "the probe is not kept on the finding")
}
