package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

// walkthroughBlocks returns the sh blocks of the README's walkthrough, in order.
func walkthroughBlocks(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	s := string(readme)
	begin, end := strings.Index(s, "<!-- walkthrough:begin -->"), strings.Index(s, "<!-- walkthrough:end -->")
	require.True(t, begin >= 0 && end > begin, "README has the walkthrough markers")
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(s[begin:end], -1)
	require.GreaterOrEqual(t, len(blocks), 8)
	out := make([]string, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, b[1])
	}
	return out
}

// TestREADMEWalkthrough runs the README's "first scan in five minutes" blocks
// exactly as written, in one shell, against the running system (with
// VULNSCAN pointed at it instead of 127.0.0.1:8080), then checks through the
// API that each step did what the README says.
func TestREADMEWalkthrough(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq", "tar"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "the walkthrough needs %s", tool)
	}
	blocks := walkthroughBlocks(t)
	require.Contains(t, blocks[0], "export VULNSCAN=http://127.0.0.1:8080")
	base := strings.TrimSuffix(sys.BaseURL, "/v1")

	dir := t.TempDir()
	require.NoError(t, os.Symlink(sys.BinDir(), filepath.Join(dir, "bin")))
	script := "set -euo pipefail\n" + strings.Join(blocks, "\n") +
		"\nprintf '\\nWALKTHROUGH %s %s %s %s\\n' \"$KEY\" \"$EST\" \"$SCAN\" \"$FINDING\"\n"
	// The README's address is the default of make run; the test's system
	// listens elsewhere.
	script = strings.Replace(script, "export VULNSCAN=http://127.0.0.1:8080", "export VULNSCAN="+base, 1)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, sys.Env...), "PATH="+os.Getenv("PATH"), "HOME="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())

	out := stdout.String()
	i := strings.LastIndex(out, "WALKTHROUGH ")
	require.GreaterOrEqual(t, i, 0, out)
	ids := strings.Fields(out[i:])
	require.Len(t, ids, 5, out)
	key, est, scan, finding := ids[1], ids[2], ids[3], ids[4]

	get := func(path string) map[string]any {
		t.Helper()
		r, err := sys.Do("GET", path, key, nil)
		require.NoError(t, err)
		require.Equal(t, 200, r.Status, "%s: %s", path, r.Body)
		return r.JSON()
	}
	require.Equal(t, "completed", get("/cost-estimations/" + est)["status"])
	require.Equal(t, "completed", get("/scans/" + scan + "/status")["status"])
	f := get("/findings/" + finding)
	require.Equal(t, "true_positive", f["state"], "the PATCH step confirmed the finding")
	require.NotNil(t, f["line"])
	require.NotEmpty(t, f["fingerprint"])
	thread := f["triage_thread"].([]any)
	require.Len(t, thread, 2, "the state change and the comment are in the thread")
	require.Equal(t, "true_positive", thread[0].(map[string]any)["reaction"])
	require.Equal(t, "Confirmed: the query is built from request data.", thread[1].(map[string]any)["comment"])
	list := get("/scans/" + scan + "/findings")
	require.GreaterOrEqual(t, list["total"], float64(1), "the demo app has findings")
	titles := ""
	for _, x := range list["data"].([]any) {
		titles += x.(map[string]any)["title"].(string) + "\n"
	}
	require.Regexp(t, `(?i)sql`, titles)

	var sarif map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "demo.sarif"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sarif))
	require.Equal(t, "2.1.0", sarif["version"])
	csv, err := os.ReadFile(filepath.Join(dir, "demo.csv"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(csv), "id,title,"), "%s", csv)
	require.Contains(t, out, `"status": "completed"`, "the status blocks print the terminal status")

	// The documents the README links to answer without a key.
	for _, path := range []string{"/openapi.json", "/healthz", "/readyz"} {
		r, err := (&systest.System{BaseURL: base}).Do("GET", path, "", nil)
		require.NoError(t, err)
		require.Equal(t, 200, r.Status, "%s: %s", path, r.Body)
	}
	r, err := (&systest.System{BaseURL: base}).Do("GET", "/openapi.json", "", nil)
	require.NoError(t, err)
	require.Equal(t, "3.0.3", r.JSON()["openapi"])
}
