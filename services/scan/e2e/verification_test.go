package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

// githubStyleToken makes a token of GitHub's format with a valid checksum.
// It is generated at run time, so that no credential-looking value is
// committed, and it authenticates nowhere.
func githubStyleToken(t *testing.T) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 30)
	_, err := rand.Read(b)
	require.NoError(t, err)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	n := uint64(crc32.ChecksumIEEE(b))
	sum := make([]byte, 6)
	for i := 5; i >= 0; i-- {
		sum[i] = base62[n%62]
		n /= 62
	}
	return "ghp_" + string(b) + string(sum)
}

func findingsOfScan(t *testing.T, key, scanID string) []map[string]any {
	t.Helper()
	r, err := sys.Do("GET", "/findings?limit=100&scan_id="+scanID, key, nil)
	require.NoError(t, err)
	require.Equal(t, 200, r.Status, string(r.Body))
	var out []map[string]any
	for _, f := range r.JSON()["data"].([]any) {
		out = append(out, f.(map[string]any))
	}
	return out
}

func byFile(fs []map[string]any, file string) map[string]any {
	for _, f := range fs {
		if f["affected_file"] == file {
			return f
		}
	}
	return nil
}

func verificationOf(t *testing.T, key, scanID string) map[string]any {
	t.Helper()
	d, err := sys.Do("GET", "/scans/"+scanID, key, nil)
	require.NoError(t, err)
	require.Equal(t, 200, d.Status, string(d.Body))
	v, ok := d.JSON()["verification"].(map[string]any)
	require.True(t, ok, "scan details carry verification counts: %s", d.Body)
	return v
}

// TestVerificationDecides scans a repository with one confident flaw (a
// private key committed in application code) and one doubtful candidate (a
// token in a test file). In auto mode the first is approved and visible at
// once; the second is held in verification, where the operator's pending
// list shows it with its confidence and reasons, until the operator
// approves it.
func TestVerificationDecides(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 100, "auto")
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	token := githubStyleToken(t)
	files := map[string]string{
		"requirements.txt": "flask==3.0.0\n",
		"app.py": `from flask import Flask

from deploy import sign

app = Flask(__name__)


@app.route("/health")
def health():
    return sign("ok")
`,
		"deploy.py":             "import jwt\n\nSIGNING_KEY = \"\"\"" + keyPEM + "\"\"\"\n\n\ndef sign(payload):\n    return jwt.encode({\"p\": payload}, SIGNING_KEY, algorithm=\"RS256\")\n",
		"tests/test_release.py": "RELEASE_TOKEN = \"" + token + "\"\n\n\ndef test_release():\n    assert RELEASE_TOKEN\n",
	}
	repoURL := sys.Upload(t, org.WriteKey, files)
	est := estimate(t, sys, org.WriteKey, repoURL)
	require.Equal(t, "completed", est["status"], "%v", est)
	r := post(t, org.WriteKey, scanBody(est["id"].(string), repoURL, nil))
	require.Equal(t, 201, r.Status, string(r.Body))
	scanID := r.JSON()["id"].(string)
	require.Equal(t, "completed", waitScan(t, sys, org.ReadKey, scanID, 120*time.Second)["status"])
	require.NotContains(t, sys.SettledLog(), token, "a secret's value is never logged")

	// The confident flaw is approved at once and says why.
	visible := findingsOfScan(t, org.ReadKey, scanID)
	key := byFile(visible, "deploy.py")
	require.NotNil(t, key, "the committed private key is approved: %v", visible)
	require.Equal(t, "secrets", key["category"])
	require.Contains(t, key["tags"], "confidence:high")
	require.Contains(t, key["description"], "Why we report this (confidence: high):")
	require.Contains(t, key["description"], "Secret format checked: a private key block")
	for _, f := range visible {
		require.Contains(t, f["tags"], "confidence:high", "auto mode approves only high confidence: %v", f)
	}

	// The doubtful candidate is held: it does not exist for the API.
	require.Nil(t, byFile(visible, "tests/test_release.py"))
	out, err := sys.Ctl("finding", "list", "--scan", scanID, "--pending")
	require.NoError(t, err)
	var held map[string]any
	for _, x := range out["data"].([]any) {
		f := x.(map[string]any)
		require.Equal(t, "pending", f["verification_status"])
		require.NotEmpty(t, f["confidence"])
		require.NotEqual(t, "high", f["confidence"])
		require.NotEmpty(t, f["reasons"], "a held finding shows why: %v", f)
		if f["affected_file"] == "tests/test_release.py" {
			held = f
		}
	}
	require.NotNil(t, held, "the operator's pending list shows the held candidate: %v", out)
	require.Equal(t, "low", held["confidence"])
	reasons := strings.Join(func() []string {
		var s []string
		for _, r := range held["reasons"].([]any) {
			s = append(s, r.(string))
		}
		return s
	}(), " ")
	require.Contains(t, reasons, "test, example or fixture code")
	require.NotContains(t, reasons, token)
	heldID := held["id"].(string)
	g, err := sys.Do("GET", "/findings/"+heldID, org.ReadKey, nil)
	require.NoError(t, err)
	systest.RequireError(t, g, 404, "Finding not found")
	byOrg, err := sys.Ctl("finding", "list", "--org", org.ID, "--pending")
	require.NoError(t, err)
	require.Contains(t, strings.Join(func() []string {
		var ids []string
		for _, x := range byOrg["data"].([]any) {
			ids = append(ids, x.(map[string]any)["id"].(string))
		}
		return ids
	}(), " "), heldID)

	// Scan details count candidates, approved and held.
	v := verificationOf(t, org.ReadKey, scanID)
	require.EqualValues(t, len(visible), v["approved"])
	require.EqualValues(t, len(out["data"].([]any)), v["held"])
	require.EqualValues(t, 0, v["rejected"])
	require.EqualValues(t, len(visible)+len(out["data"].([]any)), v["candidates"])
	l, err := sys.Do("GET", "/scans", org.ReadKey, nil)
	require.NoError(t, err)
	require.Nil(t, l.JSON()["data"].([]any)[0].(map[string]any)["verification"], "lists do not count verification")

	// The operator's approval makes it visible, with its reasons.
	a, err := sys.Ctl("finding", "approve", "--id", heldID)
	require.NoError(t, err)
	require.Equal(t, "approved", a["verification_status"])
	g, err = sys.Do("GET", "/findings/"+heldID, org.ReadKey, nil)
	require.NoError(t, err)
	require.Equal(t, 200, g.Status, string(g.Body))
	approved := g.JSON()
	require.Equal(t, "tests/test_release.py", approved["affected_file"])
	require.Contains(t, approved["tags"], "confidence:low")
	require.Contains(t, approved["description"], "Why we report this (confidence: low):")
	require.NotContains(t, string(g.Body), token, "the token is redacted")
	require.NotNil(t, byFile(findingsOfScan(t, org.ReadKey, scanID), "tests/test_release.py"))
	after := verificationOf(t, org.ReadKey, scanID)
	require.EqualValues(t, v["approved"].(float64)+1, after["approved"])
	require.EqualValues(t, v["held"].(float64)-1, after["held"])
	require.Equal(t, v["candidates"], after["candidates"])
}
