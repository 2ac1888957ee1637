// Package timeout tests the refund rule of a scan that uses its whole
// attempt, on a system whose scan job timeout is one second.
package timeout

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	os.Exit(systest.Run(m, systest.Options{Env: map[string]string{
		"VULNSCAN_RATE_LIMIT": "1000:2000",
		"SCAN_JOB_TIMEOUT":    "1s",
	}}, &sys))
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

// largeApp is an upload of 2,000 Python modules, each with injectable
// calls: its analysis takes far longer than one second.
func largeApp(t *testing.T) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < 2000; i++ {
		w, err := zw.Create(fmt.Sprintf("pkg%02d/mod%04d.py", i%40, i))
		require.NoError(t, err)
		fmt.Fprintf(w, "import os\nimport sqlite3\nfrom flask import Flask, request\napp = Flask(__name__)\n\n")
		for j := 0; j < 20; j++ {
			fmt.Fprintf(w, "@app.route('/r%d_%d')\ndef r%d_%d():\n    os.system('ls ' + request.args.get('d'))\n    c = sqlite3.connect('a.db')\n    return str(c.execute(\"SELECT * FROM t WHERE n = '\" + request.args.get('n') + \"'\").fetchall())\n\n", i, j, i, j)
		}
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// TestTimedOutScanIsNotRefunded: a scan whose attempt reaches
// SCAN_JOB_TIMEOUT fails after that one attempt with the documented message,
// and its credits stay used; the worker's scratch directory is left empty.
func TestTimedOutScanIsNotRefunded(t *testing.T) {
	org, err := sys.NewOrg(100000, "auto")
	require.NoError(t, err)

	req, err := http.NewRequest("POST", sys.BaseURL+"/uploads", bytes.NewReader(largeApp(t)))
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", org.WriteKey)
	req.Header.Set("Content-Type", "application/zip")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, 201, resp.StatusCode, string(b))
	repo := systest.Response{Body: b}.JSON()["repo_url"].(string)

	r := do(t, "POST", "/cost-estimations", org.WriteKey, map[string]any{"repos": []map[string]any{{"source": "upload", "repo_url": repo}}})
	require.Equal(t, 201, r.Status, string(r.Body))
	estID := r.JSON()["id"].(string)
	var est map[string]any
	require.Eventually(t, func() bool {
		est = do(t, "GET", "/cost-estimations/"+estID, org.WriteKey, nil).JSON()
		return est["status"] == "completed"
	}, 120*time.Second, 200*time.Millisecond)
	credits := int(est["total_credits"].(float64))
	require.Positive(t, credits)

	r = do(t, "POST", "/scans", org.WriteKey, map[string]any{"cost_estimation_id": estID, "repos": []map[string]any{{"url": repo, "branch": "", "source": "upload"}}})
	require.Equal(t, 201, r.Status, string(r.Body))
	scanID := r.JSON()["id"].(string)
	require.Equal(t, 100000-credits, balance(t, org.ReadKey))

	var s map[string]any
	require.Eventually(t, func() bool {
		s = do(t, "GET", "/scans/"+scanID, org.ReadKey, nil).JSON()
		return s["status"] == "completed" || s["status"] == "failed"
	}, 120*time.Second, 200*time.Millisecond, "the scan did not end\n%s", sys.Log.String())
	require.Equal(t, "failed", s["status"], "%v", s)
	require.Equal(t, "The scan did not finish within its time limit of 1s; the repositories or targets are too large or too slow to scan, and the credits are not refunded", s["error"])
	require.NotNil(t, s["started_at"])
	require.Equal(t, 100000-credits, balance(t, org.ReadKey), "a scan that used its whole attempt keeps its credits")

	// One attempt, and the job is finished: no retry follows.
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
	require.Equal(t, 1, attempt)

	// The attempt's scratch tree and downloaded archive are gone.
	entries, err := os.ReadDir(filepath.Join(sys.DataDir, "scans"))
	require.NoError(t, err)
	require.Empty(t, entries)
}
