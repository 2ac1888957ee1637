// Package fairness tests the scheduling of scans across organizations end
// to end: with two scan workers and at most one running scan per
// organization, one organization's queue cannot hold every worker.
package fairness

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	os.Exit(systest.Run(m, systest.Options{Env: map[string]string{
		"VULNSCAN_RATE_LIMIT":      "1000:2000",
		"SCAN_WORKERS":             "2",
		"SCAN_MAX_RUNNING_PER_ORG": "1",
	}}, &sys))
}

const app = "from flask import Flask, request\nimport os\napp = Flask(__name__)\n\n@app.route('/run')\ndef run():\n    os.system('ls ' + request.args.get('dir'))\n    return 'ok'\n"

func do(t *testing.T, method, path, key string, body any) systest.Response {
	t.Helper()
	r, err := sys.Do(method, path, key, body)
	require.NoError(t, err)
	return r
}

// estimation uploads a small application, estimates it and returns the
// estimation id and the repository URL.
func estimation(t *testing.T, key string) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("app.py")
	require.NoError(t, err)
	_, err = w.Write([]byte(app))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	req, err := http.NewRequest("POST", sys.BaseURL+"/uploads", &buf)
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "application/zip")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, 201, resp.StatusCode, string(b))
	repo := systest.Response{Body: b}.JSON()["repo_url"].(string)

	r := do(t, "POST", "/cost-estimations", key, map[string]any{"repos": []map[string]any{{"source": "upload", "repo_url": repo}}})
	require.Equal(t, 201, r.Status, string(r.Body))
	id := r.JSON()["id"].(string)
	require.Eventually(t, func() bool {
		return do(t, "GET", "/cost-estimations/"+id, key, nil).JSON()["status"] == "completed"
	}, 60*time.Second, 100*time.Millisecond)
	return id, repo
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

func at(t *testing.T, s map[string]any, field string) time.Time {
	t.Helper()
	v, ok := s[field].(string)
	require.True(t, ok, "%s is not set: %v", field, s)
	ts, err := time.Parse(time.RFC3339Nano, v)
	require.NoError(t, err)
	return ts
}

// TestOneOrganizationCannotHoldEveryWorker: organization A queues three
// scans whose live target holds each one running; organization B then starts
// one. There are two workers, so without the per-organization limit A's
// first two scans would take both and B would wait for one of them to end.
// With it, A's second and third scans step aside while A's first runs, and
// B's scan runs on the other worker and completes before A's queue moves on.
func TestOneOrganizationCannotHoldEveryWorker(t *testing.T) {
	// The live target answers every page after 15 s (inside the scanner's
	// 20 s request timeout) with links to more pages, until released.
	arrived, release := make(chan struct{}, 1000), make(chan struct{})
	var pages atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><body>done</body></html>`)
		case <-r.Context().Done():
		case <-time.After(15 * time.Second):
			n := pages.Add(1)
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><body><a href="/p%d">next</a> <a href="/q%d">other</a></body></html>`, n, n)
		}
	}))
	t.Cleanup(target.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})

	a, err := sys.NewOrg(1000, "auto")
	require.NoError(t, err)
	b, err := sys.NewOrg(1000, "auto")
	require.NoError(t, err)
	var estA, repoA [3]string
	for i := range estA {
		estA[i], repoA[i] = estimation(t, a.WriteKey)
	}
	estB, repoB := estimation(t, b.WriteKey)

	var scansA [3]string
	scansA[0] = startScan(t, a.WriteKey, estA[0], repoA[0], []string{target.URL + "/"})
	select {
	case <-arrived:
	case <-time.After(120 * time.Second):
		t.Fatalf("A's first scan never reached its live target\n%s", sys.Log.String())
	}
	for i := 1; i < len(scansA); i++ {
		scansA[i] = startScan(t, a.WriteKey, estA[i], repoA[i], []string{target.URL + "/"})
	}
	scanB := startScan(t, b.WriteKey, estB, repoB, nil)

	var sB map[string]any
	require.Eventually(t, func() bool {
		sB = scan(t, b.ReadKey, scanB)
		return sB["status"] == "completed" || sB["status"] == "failed"
	}, 150*time.Second, 200*time.Millisecond, "B's scan did not finish while A's scans were queued\n%s", sys.Log.String())
	require.Equal(t, "completed", sB["status"], "%v", sB)
	// Observed at B's completion: A's queue has not moved on.
	for _, id := range scansA[1:] {
		s := scan(t, a.ReadKey, id)
		require.Equal(t, "pending", s["status"], "A's scan %s ran before B's completed: %v", id, s)
		require.Nil(t, s["started_at"])
	}

	close(release)
	finished := map[string]map[string]any{}
	require.Eventually(t, func() bool {
		for _, id := range scansA {
			s := scan(t, a.ReadKey, id)
			if s["status"] != "completed" && s["status"] != "failed" {
				return false
			}
			finished[id] = s
		}
		return true
	}, 300*time.Second, 500*time.Millisecond, "A's queue did not drain\n%s", sys.Log.String())

	// The recorded times tell the same order: B ran while A's first scan
	// ran, and A's other scans started only after B had completed.
	bStart, bDone := at(t, sB, "started_at"), at(t, sB, "completed_at")
	require.True(t, bStart.Before(at(t, finished[scansA[0]], "completed_at")), "B started while A's first scan was running")
	for _, id := range scansA[1:] {
		s := finished[id]
		require.Equal(t, "completed", s["status"], "%v", s)
		start := at(t, s, "started_at")
		require.True(t, start.After(bDone), "A's scan %s started at %s, before B's completed at %s", id, start, bDone)
	}
}
