// Package checkout tests the scan worker's checkout budgets end to end: a
// repository that passes estimation but whose commit holds more files than
// the worker may write, served by a local HTTPS git server on loopback.
package checkout

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var (
	sys     *systest.System
	gitRoot string
	gitURL  string
)

// maxFiles is the worker's file budget on this system; estimation keeps its
// own default, so a repository above it passes estimation.
const maxFiles = 10

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	var err error
	gitRoot, err = os.MkdirTemp("", "vulnscan-git-")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(gitRoot) }()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return 0, fmt.Errorf("git --exec-path: %w", err)
	}
	srv := httptest.NewTLSServer(&cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + gitRoot, "GIT_HTTP_EXPORT_ALL=1"},
	})
	defer srv.Close()
	gitURL = srv.URL
	ca := filepath.Join(gitRoot, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		return 0, err
	}
	return systest.Run(m, systest.Options{Env: map[string]string{
		"VULNSCAN_RATE_LIMIT":     "1000:2000",
		"VULNSCAN_EXTRA_CA_FILE":  ca,
		"SCAN_CHECKOUT_MAX_FILES": fmt.Sprint(maxFiles),
	}}, &sys), nil
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// publish makes a bare repository of files files on branch main and returns its URL.
func publish(t *testing.T, name string, files int) string {
	t.Helper()
	work := t.TempDir()
	for i := 0; i < files; i++ {
		require.NoError(t, os.WriteFile(filepath.Join(work, fmt.Sprintf("mod%03d.py", i)),
			[]byte(fmt.Sprintf("import os\n\n\ndef f%d(d):\n    os.system('ls ' + d)\n", i)), 0o644))
	}
	git(t, work, "init", "-q", "-b", "main")
	git(t, work, "add", "-A")
	git(t, work, "commit", "-q", "-m", "initial")
	bare := filepath.Join(gitRoot, name+".git")
	git(t, gitRoot, "clone", "-q", "--bare", work, bare)
	git(t, bare, "config", "http.uploadpack", "true")
	return gitURL + "/" + name + ".git"
}

func do(t *testing.T, method, path, key string, body any) systest.Response {
	t.Helper()
	r, err := sys.Do(method, path, key, body)
	require.NoError(t, err)
	return r
}

func balance(t *testing.T, key string) int {
	t.Helper()
	r := do(t, "GET", "/credits", key, nil)
	require.Equal(t, 200, r.Status, string(r.Body))
	return int(r.JSON()["balance"].(float64))
}

// TestCheckoutOverBudgetFailsInWorker: a repository of 40 files is
// estimated (estimation's own budget is far larger), then scanned by a
// worker allowed 10 files. The bomb is met inside the worker: the scan fails
// at once (one attempt) with the size-limit error, its credits are refunded
// (a scan refused by its bounds before analysis is), and the worker's
// scratch directory is empty afterwards.
func TestCheckoutOverBudgetFailsInWorker(t *testing.T) {
	org, err := sys.NewOrg(1000, "auto")
	require.NoError(t, err)
	url := publish(t, "many-files", 4*maxFiles)

	r := do(t, "POST", "/cost-estimations", org.WriteKey, map[string]any{"repos": []map[string]any{{"source": "public", "repo_url": url}}})
	require.Equal(t, 201, r.Status, string(r.Body))
	estID := r.JSON()["id"].(string)
	var est map[string]any
	require.Eventually(t, func() bool {
		est = do(t, "GET", "/cost-estimations/"+estID, org.WriteKey, nil).JSON()
		return est["status"] == "completed" || est["status"] == "failed" || est["status"] == "partial"
	}, 120*time.Second, 200*time.Millisecond)
	require.Equal(t, "completed", est["status"], "%v", est)
	credits := int(est["total_credits"].(float64))
	require.Positive(t, credits)

	r = do(t, "POST", "/scans", org.WriteKey, map[string]any{"cost_estimation_id": estID, "repos": []map[string]any{{"url": url, "branch": "main", "source": "public"}}})
	require.Equal(t, 201, r.Status, string(r.Body))
	scanID := r.JSON()["id"].(string)
	require.Equal(t, 1000-credits, balance(t, org.ReadKey))

	var s map[string]any
	require.Eventually(t, func() bool {
		s = do(t, "GET", "/scans/"+scanID, org.ReadKey, nil).JSON()
		return s["status"] == "completed" || s["status"] == "failed"
	}, 120*time.Second, 200*time.Millisecond, "the scan did not end\n%s", sys.Log.String())
	require.Equal(t, "failed", s["status"], "%v", s)
	require.Equal(t, "Repository "+url+" exceeds the size limit", s["error"])
	require.Equal(t, 1000, balance(t, org.ReadKey), "a scan refused by its bounds before analysis is refunded")

	pool, err := pgxpool.New(context.Background(), sys.DatabaseURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	var attempt int
	var state string
	require.Eventually(t, func() bool {
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT attempt, state FROM scan.river_job WHERE kind = 'run_scan' AND args->>'scan_id' = $1`, scanID).Scan(&attempt, &state))
		return state != "running"
	}, 30*time.Second, 100*time.Millisecond)
	require.Equal(t, "completed", state)
	require.Equal(t, 1, attempt, "a refused checkout is not retried")

	entries, err := os.ReadDir(filepath.Join(sys.DataDir, "scans"))
	require.NoError(t, err)
	require.Empty(t, entries, "the worker's scratch directory is empty after the refused checkout")
}
