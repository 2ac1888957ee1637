package secrets_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/secrets"
)

// Test credentials are assembled from pieces so that this file itself holds
// no literal secret.
var (
	awsID     = "AKIA" + "Z7QWERTYUIOPLKJH"
	githubPAT = "ghp_" + "9aB3kL0pQ7rT2vX5yZ1cE4gH6jM8nP0sU2wY"
	slackBot  = "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
	stripeKey = "sk_live_" + "51HqLyjWDarjtT1zdp7dcXYZ" + "abcdefghijklmn"
	rsaBody   = "MIIEowIBAAKCAQEA" + strings.Repeat("q8Zk3Lm9Pw2Xv7Rt", 4) + "\n" + strings.Repeat("Yb5Nc1Df6Gh0Jk4L", 4)
	rsaKey    = "-----BEGIN RSA PRIVATE" + " KEY-----\n" + rsaBody + "\n-----END RSA PRIVATE" + " KEY-----"
)

// newScanner returns a scanner (the detector is built once per process by
// New).
func newScanner(t *testing.T) *secrets.Scanner {
	t.Helper()
	s, err := secrets.New()
	require.NoError(t, err)
	return s
}

func TestScanFindsCredentials(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file, src, secret string
		line                    int
	}{
		{"aws access key in go", "cfg/aws.go", "package cfg\n\nconst id = \"" + awsID + "\"\n", awsID, 3},
		{"github token in yaml", "ci/config.yml", "env:\n  token: " + githubPAT + "\n", githubPAT, 2},
		{"slack bot token in js", "bot.js", "// bot\nconst token = '" + slackBot + "';\n", slackBot, 2},
		{"stripe live key in python", "pay.py", "import stripe\n\n\nstripe.api_key = \"" + stripeKey + "\"\n", stripeKey, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := newScanner(t).Scan(tc.file, []byte(tc.src))
			require.NotEmpty(t, out)
			for _, f := range out {
				require.True(t, strings.HasPrefix(f.RuleID, "secrets."), f.RuleID)
				require.Equal(t, "secrets", f.Category)
				require.Equal(t, "high", f.Severity)
				require.Equal(t, tc.file, f.AffectedFile)
				require.Equal(t, tc.line, f.StartLine)
				require.GreaterOrEqual(t, f.EndLine, f.StartLine)
				require.Contains(t, f.Tags, f.RuleID)
				require.Contains(t, f.Tags, "CWE-798")
				require.True(t, strings.HasPrefix(f.FingerprintKey, "secret:"))
				for _, field := range []string{f.AffectedCode, f.Description, f.Title, f.FingerprintKey} {
					require.NotContains(t, field, tc.secret, "the secret never appears in the finding")
				}
				require.Contains(t, f.AffectedCode, tc.secret[:4], "the snippet keeps a recognisable prefix")
				require.Contains(t, f.AffectedCode, "********")
			}
		})
	}
}

func TestScanPrivateKeySpansLines(t *testing.T) {
	t.Parallel()
	src := "# deploy key\n" + rsaKey + "\n"
	out := newScanner(t).Scan("deploy/id_rsa", []byte(src))
	require.NotEmpty(t, out)
	f := out[0]
	require.Equal(t, 2, f.StartLine)
	require.Greater(t, f.EndLine, f.StartLine)
	for _, part := range strings.Split(rsaBody, "\n") {
		require.NotContains(t, f.AffectedCode, part, "each line of a multi-line secret is redacted")
	}
}

func TestScanIgnoresNonSecrets(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, file, src string }{
		{"environment lookup", "a.py", "password = os.environ['DB_PASSWORD']\n"},
		{"placeholder", "config.yml", "aws_access_key_id: YOUR_ACCESS_KEY_HERE\n"},
		{"empty value", ".env", "API_KEY=\n"},
		{"prose", "README.md", "Set the token in your environment before running the tool.\n"},
		{"binary-looking bytes", "blob.bin", "\x00\x01\x02\x03 not text"},
		{"empty file", "x.txt", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Empty(t, newScanner(t).Scan(tc.file, []byte(tc.src)))
		})
	}
}

func TestScanSameSecretTwice(t *testing.T) {
	t.Parallel()
	src := "a = \"" + awsID + "\"\nb = \"" + awsID + "\"\n"
	out := newScanner(t).Scan("k.py", []byte(src))
	lines := map[int]bool{}
	keys := map[string]bool{}
	for _, f := range out {
		lines[f.StartLine] = true
		keys[f.FingerprintKey] = true
	}
	require.Equal(t, map[int]bool{1: true, 2: true}, lines, "one finding per occurrence")
	require.Len(t, keys, 1, "both occurrences share the location-independent key")
}

func TestScanDifferentSecretsHaveDifferentKeys(t *testing.T) {
	t.Parallel()
	other := "AKIA" + "Z7QWERTYUIOPLKJX"
	a := newScanner(t).Scan("a.go", []byte("x := \""+awsID+"\"\n"))
	b := newScanner(t).Scan("a.go", []byte("x := \""+other+"\"\n"))
	require.NotEmpty(t, a)
	require.NotEmpty(t, b)
	require.NotEqual(t, a[0].FingerprintKey, b[0].FingerprintKey)
}

func TestScanSkipsHugeFiles(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("// filler line of a very large generated file\n", 3<<20/46) + "k = \"" + awsID + "\"\n"
	require.Greater(t, len(big), 3<<20)
	require.Empty(t, newScanner(t).Scan("gen.go", []byte(big)))
}

func TestScannerIsSharedAndConcurrent(t *testing.T) {
	t.Parallel()
	a, err := secrets.New()
	require.NoError(t, err)
	b, err := secrets.New()
	require.NoError(t, err)
	counts := make([]int, 4)
	var wg sync.WaitGroup
	for i := range counts {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i] = len(s.Scan("a.go", []byte("k := \""+awsID+"\"\n")))
		}()
	}
	wg.Wait()
	for _, n := range counts {
		require.Positive(t, n)
		require.Equal(t, counts[0], n, "every goroutine finds the same")
	}
}
