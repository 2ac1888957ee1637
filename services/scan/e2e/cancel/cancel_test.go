// Package cancel tests scan cancellation end to end through the gateway, on
// a system with a single scan worker, so that a second scan stays pending
// while the first one runs.
package cancel

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	os.Exit(systest.Run(m, systest.Options{Env: map[string]string{"VULNSCAN_RATE_LIMIT": "1000:2000", "SCAN_WORKERS": "1"}}, &sys))
}

var app = map[string]string{
	"requirements.txt": "flask==3.0.0\n",
	"app.py": `import sqlite3
from flask import Flask, request

app = Flask(__name__)


@app.route("/user")
def user():
    name = request.args.get("name")
    conn = sqlite3.connect("app.db")
    return str(conn.execute("SELECT * FROM users WHERE name = '" + name + "'").fetchall())
`,
}

func do(t *testing.T, method, path, key string, body any) systest.Response {
	t.Helper()
	r, err := sys.Do(method, path, key, body)
	require.NoError(t, err)
	return r
}

func upload(t *testing.T, key string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range app {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	req, err := http.NewRequest("POST", sys.BaseURL+"/uploads", &buf)
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "application/zip")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, 201, resp.StatusCode, string(b))
	return systest.Response{Body: b}.JSON()["repo_url"].(string)
}

// estimation uploads the app, estimates it and returns the estimation id,
// the repository URL and the credits.
func estimation(t *testing.T, key string) (string, string, int) {
	t.Helper()
	repo := upload(t, key)
	r := do(t, "POST", "/cost-estimations", key, map[string]any{"repos": []map[string]any{{"source": "upload", "repo_url": repo}}})
	require.Equal(t, 201, r.Status, string(r.Body))
	id := r.JSON()["id"].(string)
	var est map[string]any
	require.Eventually(t, func() bool {
		est = do(t, "GET", "/cost-estimations/"+id, key, nil).JSON()
		return est["status"] == "completed"
	}, 60*time.Second, 100*time.Millisecond)
	credits := int(est["total_credits"].(float64))
	require.Positive(t, credits)
	return id, repo, credits
}

func startScan(t *testing.T, key, estID, repo string, targets []string) string {
	t.Helper()
	body := map[string]any{"cost_estimation_id": estID, "repos": []map[string]any{{"url": repo, "branch": "", "source": "upload"}}}
	if targets != nil {
		body["target_urls"] = targets
	}
	r := do(t, "POST", "/scans", key, body)
	require.Equal(t, 201, r.Status, string(r.Body))
	return r.JSON()["id"].(string)
}

func scan(t *testing.T, key, id string) map[string]any {
	t.Helper()
	r := do(t, "GET", "/scans/"+id, key, nil)
	require.Equal(t, 200, r.Status, string(r.Body))
	return r.JSON()
}

func balance(t *testing.T, key string) int {
	t.Helper()
	r := do(t, "GET", "/credits", key, nil)
	require.Equal(t, 200, r.Status, string(r.Body))
	return int(r.JSON()["balance"].(float64))
}

func requireError(t *testing.T, r systest.Response, status int, contains string) {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
	m := r.JSON()
	require.EqualValues(t, status, m["statusCode"], "%s", r.Body)
	require.Equal(t, http.StatusText(status), m["error"])
	require.Contains(t, strings.ToLower(fmt.Sprint(m["message"])), strings.ToLower(contains))
}

// jobFinished reports whether the scan's run job has ended.
func jobFinished(t *testing.T, pool *pgxpool.Pool, scanID string) bool {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM scan.river_job WHERE kind = 'run_scan' AND args->>'scan_id' = $1
		AND state IN ('completed', 'cancelled', 'discarded')`, scanID).Scan(&n))
	return n == 1
}

// TestCancel: a running scan stops on its worker and keeps its credits; a
// pending one never starts, is refunded in full and frees its estimation;
// terminal, foreign and malformed cancels are refused with the spec's body.
func TestCancel(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, sys.DatabaseURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	// A slow live target keeps the first scan running: it answers every
	// page after 15 s (inside the scanner's 20 s request timeout) with links
	// to more pages, and tells when the scanner abandons a request, which
	// only a cancellation of the scan does.
	var hits atomic.Int32
	arrived, aborted := make(chan struct{}, 1000), make(chan struct{}, 1000)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
			aborted <- struct{}{}
		case <-time.After(15 * time.Second):
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><body><a href="/p%d">next</a> <a href="/q%d">other</a></body></html>`, n, n)
		}
	}))
	t.Cleanup(target.Close)

	org, err := sys.NewOrg(1000, "auto")
	require.NoError(t, err)
	other, err := sys.NewOrg(1000, "auto")
	require.NoError(t, err)

	estA, repoA, creditsA := estimation(t, org.WriteKey)
	estB, repoB, creditsB := estimation(t, org.WriteKey)
	running := startScan(t, org.WriteKey, estA, repoA, []string{target.URL + "/"})
	select {
	case <-arrived:
	case <-time.After(120 * time.Second):
		t.Fatalf("the scan never reached its live target\n%s", sys.Log.String())
	}
	require.Equal(t, "running", scan(t, org.ReadKey, running)["status"])

	// The only worker is busy: the second scan waits.
	pending := startScan(t, org.WriteKey, estB, repoB, nil)
	require.Equal(t, "pending", scan(t, org.ReadKey, pending)["status"])
	require.Equal(t, 1000-creditsA-creditsB, balance(t, org.ReadKey))

	t.Run("refused", func(t *testing.T) {
		requireError(t, do(t, "POST", "/scans/"+pending+"/cancel", org.ReadKey, nil), 403, "write")
		requireError(t, do(t, "POST", "/scans/"+pending+"/cancel", other.WriteKey, nil), 404, "Scan not found")
		requireError(t, do(t, "POST", "/scans/00000000-0000-4000-8000-000000000000/cancel", org.WriteKey, nil), 404, "Scan not found")
		requireError(t, do(t, "POST", "/scans/nope/cancel", org.WriteKey, nil), 400, "id")
		requireError(t, do(t, "POST", "/scans/"+pending+"/cancel", org.WriteKey, map[string]any{"force": true}), 400, "force")
		require.Equal(t, "pending", scan(t, org.ReadKey, pending)["status"])
	})

	// Pending: cancelled at once, refunded in full, estimation claimable again.
	r := do(t, "POST", "/scans/"+pending+"/cancel", org.WriteKey, nil)
	require.Equal(t, 200, r.Status, string(r.Body))
	require.Equal(t, "cancelled", r.JSON()["status"])
	require.EqualValues(t, creditsB, r.JSON()["credits_refunded"])
	require.Equal(t, 1000-creditsA, balance(t, org.ReadKey))
	requireError(t, do(t, "POST", "/scans/"+pending+"/cancel", org.WriteKey, nil), 409, "already cancelled")
	again := startScan(t, org.WriteKey, estB, repoB, nil)
	r = do(t, "POST", "/scans/"+again+"/cancel", org.WriteKey, map[string]any{})
	require.Equal(t, 200, r.Status, string(r.Body))
	require.Equal(t, 1000-creditsA, balance(t, org.ReadKey))

	// Running: the worker stops it, its credits stay used.
	r = do(t, "POST", "/scans/"+running+"/cancel", org.WriteKey, nil)
	require.Equal(t, 200, r.Status, string(r.Body))
	require.Equal(t, "cancelled", r.JSON()["status"])
	require.EqualValues(t, 0, r.JSON()["credits_refunded"])
	select {
	case <-aborted:
	case <-time.After(120 * time.Second):
		t.Fatal("the worker did not give up the live target's request")
	}
	require.Eventually(t, func() bool { return jobFinished(t, pool, running) }, 120*time.Second, 100*time.Millisecond)
	require.True(t, hasLogLine(running, "stopped a cancelled scan"), "the worker stopped because the scan was cancelled, not because a request timed out")
	requests := hits.Load()

	// The worker is free now: the cancelled pending scans never start.
	for _, id := range []string{pending, again} {
		require.Eventually(t, func() bool { return jobFinished(t, pool, id) }, 120*time.Second, 100*time.Millisecond)
		s := scan(t, org.ReadKey, id)
		require.Equal(t, "cancelled", s["status"])
		require.Nil(t, s["started_at"], "a scan cancelled while pending never starts")
		require.NotNil(t, s["completed_at"])
	}
	s := scan(t, org.ReadKey, running)
	require.Equal(t, "cancelled", s["status"])
	require.NotNil(t, s["started_at"])
	require.Nil(t, s["error"])
	require.Equal(t, requests, hits.Load(), "a cancelled scan sends no more requests")
	require.Equal(t, 1000-creditsA, balance(t, org.ReadKey))
	requireError(t, do(t, "POST", "/scans/"+running+"/cancel", org.WriteKey, nil), 409, "already cancelled")

	t.Run("list filter", func(t *testing.T) {
		l := do(t, "GET", "/scans?status=cancelled", org.ReadKey, nil)
		require.Equal(t, 200, l.Status, string(l.Body))
		require.EqualValues(t, 3, l.JSON()["total"])
		requireError(t, do(t, "GET", "/scans?status=stopped", org.ReadKey, nil), 400, "status")
	})
}

func hasLogLine(scanID, msg string) bool {
	for _, line := range strings.Split(sys.Log.String(), "\n") {
		if strings.Contains(line, scanID) && strings.Contains(line, msg) {
			return true
		}
	}
	return false
}
