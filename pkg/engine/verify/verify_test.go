package verify

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
)

func TestRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.py"), []byte("x = 1\nos.system(cmd)\n"), 0o644))
	flow := finding.Evidence{Flow: true, Steps: 3, Source: "remote input from request.args.get", EntryPoint: "Flask", TypedSink: true}
	base := finding.Finding{RuleID: "r", Category: "injection", Severity: "high", RepoURL: "repo", AffectedFile: "a.py",
		AffectedCode: "x = 1\nos.system(cmd)", StartLine: 2, EndLine: 2, Fingerprint: "fp1", Evidence: flow}
	moved := base
	moved.StartLine, moved.EndLine = 5, 5
	moved.Fingerprint = "fp2"
	dup := base
	dup.Severity = "critical"
	dup.Tags = []string{"extra"}
	dup.Evidence = finding.Evidence{} // a syntactic duplicate: the flow's confidence wins
	test := base
	test.AffectedFile, test.Fingerprint = "tests/test_a.py", "fp3"
	dropped := test
	dropped.RuleID, dropped.Fingerprint = "weak-random", "fp4"
	reproduced := finding.Finding{RuleID: "live", Category: "misconfiguration", Severity: "low", Fingerprint: "fp5", Reproduce: func() bool { return true }}
	flaky := finding.Finding{RuleID: "live", Category: "misconfiguration", Severity: "low", Fingerprint: "fp6", Reproduce: func() bool { return false }}

	out, st := Run(context.Background(), []finding.Finding{base, moved, dup, test, dropped, reproduced, flaky},
		Options{Dirs: map[string]string{"repo": dir}, DropInTests: map[string]bool{"weak-random": true}})
	require.Len(t, out, 5)
	require.Equal(t, 1, st.Merged)
	require.Equal(t, 1, st.DroppedTests)
	require.Equal(t, 7, st.Candidates)
	require.Equal(t, 2, st.Confirmed)
	require.Equal(t, 3, st.Unconfirmed)
	require.Equal(t, 3, st.Low)
	got := map[string]finding.Finding{}
	for _, f := range out {
		got[f.Fingerprint] = f
		require.Equal(t, f.Confidence == High, f.Confirmed, f.Fingerprint)
		require.NotEmpty(t, f.Reasons, f.Fingerprint)
	}
	require.True(t, got["fp1"].Confirmed)
	require.Equal(t, High, got["fp1"].Confidence)
	require.Equal(t, "critical", got["fp1"].Severity)
	require.Contains(t, got["fp1"].Tags, "extra")
	require.NotContains(t, strings.Join(got["fp1"].Reasons, " "), "syntactic", "the merged finding keeps the reasons of its best evidence")
	require.False(t, got["fp2"].Confirmed, "line 5 does not exist")
	require.Equal(t, Low, got["fp2"].Confidence)
	require.Contains(t, got["fp2"].Reasons, "The reported location was not found in the scanned tree.")
	require.Equal(t, "medium", got["fp3"].Severity)
	require.Contains(t, got["fp3"].Tags, "test-code")
	require.False(t, got["fp3"].Confirmed, "file missing")
	require.True(t, got["fp5"].Confirmed)
	require.Equal(t, Low, got["fp6"].Confidence)
}

func TestAssess(t *testing.T) {
	t.Parallel()
	remote := finding.Evidence{Flow: true, Steps: 4, Source: "remote parameter id of Spring MVC handler show", EntryPoint: "Spring MVC", TypedSink: true}
	tests := []struct {
		name    string
		f       finding.Finding
		located bool
		want    string
		reason  string
	}{
		{"request data to a typed sink from an entry point", finding.Finding{AffectedFile: "src/main/java/App.java", Evidence: remote}, true, High, "reachable from a Spring MVC entry point"},
		{"typed request source without a known entry point", finding.Finding{AffectedFile: "app.py",
			Evidence: finding.Evidence{Flow: true, Source: "remote input from request.args.get", TypedSink: true}}, true, High, "Untrusted request data"},
		{"weak randomness into a typed sink", finding.Finding{AffectedFile: "auth.py",
			Evidence: finding.Evidence{Flow: true, Source: "weakrand input from random.random", TypedSink: true}}, true, High, "weak random value"},
		{"sink matched by name only", finding.Finding{AffectedFile: "app.go",
			Evidence: finding.Evidence{Flow: true, Source: "remote input from r.FormValue", EntryPoint: "net/http"}}, true, Medium, "method name only"},
		{"environment data where no entry point reaches", finding.Finding{AffectedFile: "tool.py",
			Evidence: finding.Evidence{Flow: true, Source: "env input from os.getenv", TypedSink: true}}, true, Medium, "not request data"},
		{"unnamed source reachable from an entry point", finding.Finding{AffectedFile: "x.js",
			Evidence: finding.Evidence{Flow: true, EntryPoint: "Express", TypedSink: true}}, true, High, "Express"},
		{"unnamed source, no entry point", finding.Finding{AffectedFile: "x.js", Evidence: finding.Evidence{Flow: true, TypedSink: true}}, true, Medium, "No known entry point"},
		{"flow in test code", finding.Finding{AffectedFile: "src/test/java/AppTest.java", Evidence: remote}, true, Low, "test, example"},
		{"flow in example code", finding.Finding{AffectedFile: "examples/server/app.js", Evidence: remote}, true, Low, "test, example"},
		{"flow in documentation", finding.Finding{AffectedFile: "docs/conf.py", Evidence: remote}, true, Low, "documentation"},
		{"location gone", finding.Finding{AffectedFile: "app.py", Evidence: remote}, false, Low, "not found"},
		{"constant weak algorithm at a typed target", finding.Finding{AffectedFile: "Crypto.java",
			Evidence: finding.Evidence{Constant: true, TypedSink: true}}, true, High, "identified by its type"},
		{"constant at an untyped target", finding.Finding{AffectedFile: "crypto.js", Evidence: finding.Evidence{Constant: true}}, true, Medium, "matched by name only"},
		{"insecure property at a typed target", finding.Finding{AffectedFile: "Cookies.java",
			Evidence: finding.Evidence{Property: true, TypedSink: true}}, true, High, "insecure setting"},
		{"insecure property in a test", finding.Finding{AffectedFile: "CookiesTest.java",
			Evidence: finding.Evidence{Property: true, TypedSink: true}}, true, Low, "test"},
		{"pattern rule", finding.Finding{AffectedFile: "app.py", Language: "python"}, true, Medium, "syntactic pattern"},
		{"configuration check", finding.Finding{RuleID: "k8s.privileged", AffectedFile: "deploy/pod.yaml", Language: "kubernetes"}, true, High, "Kubernetes manifest"},
		{"configuration check in an example", finding.Finding{RuleID: "docker.user-root", AffectedFile: "examples/Dockerfile", Language: "dockerfile"}, true, Low, "example"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, reasons := Assess(tc.f, tc.located, nil)
			require.Equal(t, tc.want, got, "%q", reasons)
			require.Contains(t, strings.Join(reasons, " "), tc.reason)
			for _, r := range reasons {
				require.True(t, strings.HasSuffix(r, "."), "reasons are sentences: %q", r)
			}
		})
	}
}

// githubToken makes a token of GitHub's format with a valid or broken checksum.
func githubToken(valid bool) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 30)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	n := uint64(crc32.ChecksumIEEE(b))
	if !valid {
		n++
	}
	sum := make([]byte, 6)
	for i := 5; i >= 0; i-- {
		sum[i] = base62[n%62]
		n /= 62
	}
	return "ghp_" + string(b) + string(sum)
}

func privateKeyPEM(t *testing.T) string {
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

func TestAssessSecret(t *testing.T) {
	t.Parallel()
	key := privateKeyPEM(t)
	tests := []struct {
		name   string
		file   string
		text   string
		want   string
		reason string
	}{
		{"private key in source", "app/keys.py", "KEY = \"\"\"" + key + "\"\"\"\n", High, "private key block"},
		{"private key on one line with escapes", "app/keys.js", "const k = \"" + strings.ReplaceAll(key, "\n", "\\n") + "\";\n", High, "private key block"},
		{"private key in a test fixture", "tests/fixtures/key.pem", key, Low, "test"},
		{"private key in documentation", "docs/setup.md", "```\n" + key + "```\n", Low, "documentation"},
		{"elided private key", "app/keys.py", "KEY = \"\"\"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA...\n-----END RSA PRIVATE KEY-----\"\"\"\n", Low, "elided"},
		{"encrypted private key", "app/keys.py", strings.Replace(key, "RSA PRIVATE KEY-----\n", "RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B2C3D\n\n", 1), Medium, "passphrase"},
		{"GitHub token with a valid checksum", "deploy/release.py", "TOKEN = \"" + githubToken(true) + "\"\n", High, "valid checksum"},
		{"GitHub token with a wrong checksum", "deploy/release.py", "TOKEN = \"" + githubToken(false) + "\"\n", Low, "checksum is wrong"},
		{"GitHub token in a test", "spec/release_spec.rb", "TOKEN = \"" + githubToken(true) + "\"\n", Low, "test"},
		{"AWS documentation sample", "config.py", "AWS_ACCESS_KEY_ID = \"AKIAIOSFODNN7EXAMPLE\"\n", Low, "example"},
		{"AWS key", "config.py", "AWS_ACCESS_KEY_ID = \"AKIA" + "Z7Q2M4RXW3KJ5NTP\"\n", High, "AWS access key id"},
		{"AWS-looking sequence", "config.py", "AWS_ACCESS_KEY_ID = \"AKIA" + "QWERTYUIOPASDFGH\"\n", Low, "sequence"},
		{"placeholder context", "settings.py", "API_KEY = \"sk_live_" + "9fQ2xLr7TbV1mZc8KpW3yHd6\"  # example key\n", Low, "example"},
		{"Stripe live key", "billing.py", "stripe.api_key = \"sk_live_" + "9fQ2xLr7TbV1mZc8KpW3yHd6\"\n", High, "Stripe live key"},
		{"generic high-entropy value", "svc/client.go", "apiKey := \"q8Zt1vR4mN0pX6cL2wY9\"\n", Medium, "no provider format"},
		{"generic placeholder", "svc/client.go", "apiKey := \"xxxxxxxxxxxxxxxxxxxx\"\n", Low, "placeholder"},
		{"generic template value", "config/app.yaml", "api_key: \"${API_KEY_FROM_VAULT}\"\n", Low, "placeholder"},
		{"low entropy value", "svc/client.go", "password := \"abababababababab\"\n", Low, "not random"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lines := strings.Split(tc.text, "\n")
			start := 1
			for i, l := range lines {
				if strings.Contains(l, "PRIVATE KEY") {
					start = i + 1
					break
				}
			}
			f := finding.Finding{RuleID: "secrets.x", Category: "secrets", AffectedFile: tc.file, StartLine: start, EndLine: start}
			got, reasons := Assess(f, true, lines)
			require.Equal(t, tc.want, got, "%q", reasons)
			require.Contains(t, strings.Join(reasons, " "), tc.reason)
			joined := strings.Join(reasons, " ")
			for _, l := range lines {
				for _, tok := range strings.FieldsFunc(l, func(r rune) bool { return strings.ContainsRune(" \"'=:", r) }) {
					if len(tok) >= 16 && !strings.Contains(tok, "PRIVATE") {
						require.NotContains(t, joined, tok, "a reason must never quote the secret")
					}
				}
			}
		})
	}
}

func TestAssessSecretUnreadable(t *testing.T) {
	t.Parallel()
	got, reasons := Assess(finding.Finding{RuleID: "secrets.generic-api-key", Category: "secrets", AffectedFile: "a.py", StartLine: 3, EndLine: 3}, true, []string{"x"})
	require.Equal(t, Medium, got)
	require.Contains(t, reasons[0], "could not be read")
}

func TestMergeKeepsBestConfidence(t *testing.T) {
	t.Parallel()
	a := finding.Finding{Fingerprint: "f", Severity: "medium", Confidence: Medium, Reasons: []string{"m"}}
	b := finding.Finding{Fingerprint: "f", Severity: "high", Confidence: High, Reasons: []string{"h"}}
	c := finding.Finding{Fingerprint: "f", Severity: "low", Confidence: High, Reasons: []string{"h2"}}
	var st Stats
	out := merge([]finding.Finding{a, b, c}, &st)
	require.Len(t, out, 1)
	require.Equal(t, High, out[0].Confidence)
	require.True(t, out[0].Confirmed)
	require.Equal(t, []string{"h", "h2"}, out[0].Reasons)
	require.Equal(t, "high", out[0].Severity)
	require.Equal(t, 2, st.Merged)
}

func TestIsTestPath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"tests/a.py": true, "src/a_test.go": true, "web/x.spec.ts": true, "examples/demo.js": true,
		"src/app.py": false, "src/contest/app.py": false, "src/main/java/AppTest.java": true,
		"app/models/user_test.rb": true, "lib/user_spec.rb": true, "src/UserTest.php": true, "app/models/user.rb": false, "src/User.php": false,
	} {
		require.Equal(t, want, IsTestPath(p), p)
	}
}

func TestIsDocPath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"README.md": true, "docs/index.rst": true, "doc/api/auth.py": true, "guide.adoc": true, "README": true,
		"app.py": false, "src/docker/app.go": false, "internal/docstore/x.go": false,
	} {
		require.Equal(t, want, IsDocPath(p), p)
	}
}
