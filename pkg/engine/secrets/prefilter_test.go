package secrets

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
)

// Sample credentials, assembled so that this file holds none verbatim.
var (
	awsKey     = "AKIA" + "Z7Q3LXWR2M4KDCPT"
	githubPAT  = "ghp_" + "R8x2Lq7Vt4Zp9Wm3Ks6Jd1Hf5Gb0Nc8Ya2Ue"
	slackToken = "xoxb-" + "263594206564-2343594206574-FGqddMF8t08v8N7Oq4i57vs1"
	stripeKey  = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc9XwQ"
	genericVal = "Zx81Kq0Pv7Ls2Nw9Tb4Rm6Yh3Fc5Jd"
	privateKey = "-----BEGIN RSA " + "PRIVATE KEY-----\n" +
		"MIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8ZrN7H3xW1pQ2kL5vB8nC4dE6\n" +
		"fG7hI9jK0lM1nO2pQ3rS4tU5vW6xY7zA8bC9dD0eF1gH2iJ3kL4mN5oP6qR7sT8u\n" +
		"V9wX0yZ1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2wX3yZ4aB5cD6eF7gH8iJ9kL\n" +
		"-----END RSA " + "PRIVATE KEY-----\n"
)

// code is ordinary source text, with keywords (key, token, auth, secret)
// but no credential, n lines long.
func code(n int) string {
	var b strings.Builder
	for i := range n {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "def handler_%d(request, api_key=None):\n", i)
		case 1:
			fmt.Fprintf(&b, "    token = request.headers.get('Authorization')  # auth %d\n", i)
		case 2:
			fmt.Fprintf(&b, "    secret_name = settings.SECRET_NAME_%d\n", i)
		default:
			b.WriteString("    return render(items, total=len(items))\n")
		}
	}
	return b.String()
}

// key identifies a finding for comparison.
func key(f finding.Finding) string {
	return fmt.Sprintf("%s %d-%d %s %s", f.RuleID, f.StartLine, f.EndLine, f.FingerprintKey, f.AffectedCode)
}

func keys(fs []finding.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = key(f)
	}
	slices.Sort(out)
	return out
}

// requireSame checks that the prefiltered scan finds exactly what the full
// scan finds, and returns the findings.
func requireSame(t testing.TB, s *Scanner, file string, content []byte) []finding.Finding {
	t.Helper()
	got, want := s.Scan(file, content), s.scanFull(file, content)
	require.Equal(t, keys(want), keys(got), "file %s", file)
	return got
}

func TestPrefilterFindsWhatTheFullScanFinds(t *testing.T) {
	t.Parallel()
	s, err := New()
	require.NoError(t, err)
	tests := []struct {
		name, file, content string
		rules               []string // rules that must be among the findings
	}{
		{"aws key in code", "app/config.py", code(40) + "AWS_KEY = \"" + awsKey + "\"\n" + code(40), []string{"secrets.aws-access-token"}},
		{"github token at the end without a newline", "deploy.sh", code(30) + "export GH=" + githubPAT, []string{"secrets.github-pat"}},
		{"slack token at the start", "notify.js", "const slack = \"" + slackToken + "\";\n" + code(10), []string{"secrets.slack-bot-token"}},
		{"stripe key", "billing.rb", code(5) + "Stripe.api_key = '" + stripeKey + "'\n", []string{"secrets.stripe-access-token"}},
		{"generic key on one line", "settings.py", code(20) + "API_SECRET = \"" + genericVal + "\"\n", []string{"secrets.generic-api-key"}},
		{"generic key with its value on the next line", "settings.py", code(20) + "client_secret =\n  \"" + genericVal + "\"\n" + code(20), nil},
		{"private key spanning lines", "certs/server.key", code(50) + privateKey + code(50), []string{"secrets.private-key"}},
		{"two secrets far apart", "big.go", "var a = \"" + awsKey + "\"\n" + code(400) + "var b = \"" + githubPAT + "\"\n", []string{"secrets.aws-access-token", "secrets.github-pat"}},
		{"kubernetes secret", "k8s/secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: " +
			"c3VwZXJzZWNyZXRwYXNzd29yZDEyMw==\n", nil},
		{"terraform password", "main.tf", "resource \"x\" \"y\" {\n  administrator_login_password = \"Qz7xLp2Vn9Kr4T\"\n}\n", nil},
		{"keywords but no credential", "views.py", code(500), nil},
		{"no keyword at all", "README.md", strings.Repeat("Plain words and numbers 12345 only.\n", 200), nil},
		{"text that lower-cases to keywords only with Unicode rules", "k.py", "\u212aEY = \"" + genericVal + "\"\n", nil},
		{"empty file", "empty.txt", "", nil},
		{"keystore by its path", "certs/client.p12", "binary", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := requireSame(t, s, tc.file, []byte(tc.content))
			for _, rule := range tc.rules {
				require.True(t, slices.ContainsFunc(got, func(f finding.Finding) bool { return f.RuleID == rule }), "%s not found in %v", rule, keys(got))
			}
			if tc.rules == nil && strings.HasPrefix(tc.name, "keywords but") {
				require.Empty(t, got)
			}
		})
	}
}

// TestPrefilterOnCorpus scans every file of the engine's labelled corpus
// with and without the prefilter.
func TestPrefilterOnCorpus(t *testing.T) {
	t.Parallel()
	s, err := New()
	require.NoError(t, err)
	root := filepath.Join("..", "testdata", "corpus")
	files, found := 0, 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		files++
		found += len(requireSame(t, s, filepath.ToSlash(rel), data))
		return nil
	})
	require.NoError(t, err)
	require.NotZero(t, files)
	t.Logf("%d corpus files, %d secrets found with and without the prefilter", files, found)
}

func TestLineBreaks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want int
	}{
		{`abc`, 0},
		{`a.b`, 0},
		{`(?s)a.b`, 1},
		{`a\sb`, 1},
		{`a[^x]b`, 1},
		{`a[ \t]b`, 0},
		{`[\s'"]{0,3}=[\x60'"\s=]{0,5}`, 8},
		{`a\s*b`, maxWindow + 1},
		{`[\s\S]{64,}?`, maxWindow + 1},
		{`x(?:\n|y)z`, 1},
		{`\n{3}|\n`, 3},
		{`\bKEY\b$`, 0},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			t.Parallel()
			got, err := lineBreaks(tc.expr)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestKeywordsFind(t *testing.T) {
	t.Parallel()
	k, err := newKeywords([]string{"akia", "key", "keys", "sk_live"})
	require.NoError(t, err)
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"k", nil},
		{"KEY", []string{"key@0"}},
		{"monkeys AKIA", []string{"key@3", "keys@3", "akia@8"}},
		{"Sk_Live_x", []string{"sk_live@0"}},
		{"ke\ny", nil},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			t.Parallel()
			var got []string
			k.find([]byte(tc.text), func(w, pos int) { got = append(got, fmt.Sprintf("%s@%d", k.words[w], pos)) })
			require.Equal(t, tc.want, got)
		})
	}
	for _, bad := range []string{"k", "Key", "kéy"} {
		_, err := newKeywords([]string{bad})
		require.Error(t, err, bad)
	}
}

func TestKeywordReach(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr     string
		keywords []string
		before   int
		proven   bool
	}{
		{`\b(ghp_[0-9a-zA-Z]{36})(?:[\s;]|$)`, []string{"ghp_"}, 0, true},
		{`(?i)[\w.-]{0,50}?(?:access|auth|(?-i:[Aa]pi|API)|passw(?:or)?d)[\s'"]{0,3}=\s?(\w{10})`, []string{"access", "auth", "api", "passw"}, 0, true},
		{`[\s'"]{0,3}=\s{0,2}(?:KEY|TOKEN)x`, []string{"key", "token"}, 5, true},
		{`(?:sk|rk)_(?:test|live)_[a-z]{10}`, []string{"sk_test", "sk_live", "rk_test", "rk_live"}, 0, true},
		{`(?:sk|rk)_(?:test|live)_[a-z]{10}`, []string{"sk_live"}, 0, false},
		{`[a-z]{32}`, []string{"abc"}, 0, false},
		{`x\s*(?i:secret)`, []string{"secret"}, maxWindow + 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			t.Parallel()
			before, proven, err := keywordReach(tc.expr, tc.keywords)
			require.NoError(t, err)
			require.Equal(t, tc.proven, proven)
			if proven {
				require.Equal(t, tc.before, before)
			}
		})
	}
}

// TestRuleSplit checks that nearly all rules run on keyword windows, and
// that the rules left to whole files are the multi-line or keyword-less
// ones.
func TestRuleSplit(t *testing.T) {
	t.Parallel()
	_, err := New()
	require.NoError(t, err)
	lineRules, fileRules := len(filter.lineDet.Config.Rules), len(filter.fileDet.Config.Rules)
	t.Logf("%d line rules, %d file rules: %v", lineRules, fileRules, slices.Sorted(maps.Keys(filter.fileDet.Config.Rules)))
	require.Greater(t, lineRules, 9*fileRules)
	for _, id := range []string{"private-key", "pkcs12-file", "kubernetes-secret-yaml"} {
		require.Contains(t, filter.fileDet.Config.Rules, id)
	}
	for _, id := range []string{"generic-api-key", "aws-access-token", "github-pat", "slack-bot-token"} {
		require.Contains(t, filter.lineDet.Config.Rules, id)
	}
}
