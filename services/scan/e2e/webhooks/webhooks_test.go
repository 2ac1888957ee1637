// Package webhooks tests the scan and estimation services' webhook events
// end to end: a loopback receiver registered through the gateway gets
// estimation.completed, estimation.failed, finding.created, scan.completed,
// scan.failed and scan.cancelled, signed, from real estimations and scans;
// an estimation that ends while the findings service is down is delivered
// once it is back. It runs its own system (one scan worker) because it
// stops the findings service.
package webhooks

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	os.Exit(systest.Run(m, systest.Options{Env: map[string]string{"VULNSCAN_RATE_LIMIT": "1000:2000", "SCAN_WORKERS": "1",
		"FINDINGS_WEBHOOK_POLL": "100ms", "FINDINGS_WEBHOOK_BACKOFF": "200ms", "FINDINGS_WEBHOOK_MAX_BACKOFF": "1s"}}, &sys))
}

var app = map[string]string{
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

// estimate starts an estimation of a fresh upload and returns its id and repository.
func estimate(t *testing.T, key string) (string, string) {
	t.Helper()
	repo := upload(t, key)
	r := do(t, "POST", "/cost-estimations", key, map[string]any{"repos": []map[string]any{{"source": "upload", "repo_url": repo}}})
	require.Equal(t, 201, r.Status, string(r.Body))
	return r.JSON()["id"].(string), repo
}

func waitStatus(t *testing.T, key, path string, statuses ...string) map[string]any {
	t.Helper()
	var m map[string]any
	require.Eventually(t, func() bool {
		m = do(t, "GET", path, key, nil).JSON()
		for _, s := range statuses {
			if m["status"] == s {
				return true
			}
		}
		return false
	}, 3*time.Minute, 200*time.Millisecond, "%s never reached %v", path, statuses)
	return m
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

func dataOf(m systest.WebhookMessage, kind string) map[string]any {
	d, _ := m.Data()[kind].(map[string]any)
	return d
}

func TestScanAndEstimationEvents(t *testing.T) {
	org, err := sys.NewOrg(1000, "auto")
	require.NoError(t, err)
	recv := systest.NewWebhookReceiver(t)
	r := do(t, "POST", "/webhooks", org.WriteKey, map[string]any{"url": recv.URL + "/events",
		"events": []string{"estimation.completed", "estimation.failed", "scan.completed", "scan.failed", "scan.cancelled", "finding.created"}})
	require.Equal(t, 201, r.Status, string(r.Body))
	secret := r.JSON()["secret"].(string)
	verified := func(ms []systest.WebhookMessage) []systest.WebhookMessage {
		for _, m := range ms {
			require.True(t, m.Verify(secret), "signature of %s %s", m.Type(), m.ID)
			require.EqualValues(t, 1, m.Payload["version"])
		}
		return ms
	}

	// estimation.completed.
	estA, repoA := estimate(t, org.WriteKey)
	waitStatus(t, org.ReadKey, "/cost-estimations/"+estA, "completed")
	ev := verified(recv.WaitFor(t, 1, 2*time.Minute, "estimation.completed of A", func(m systest.WebhookMessage) bool {
		return m.Type() == "estimation.completed" && dataOf(m, "estimation")["id"] == estA
	}))[0]
	est := dataOf(ev, "estimation")
	require.Equal(t, "completed", est["status"])
	require.Positive(t, est["total_credits"])
	require.Equal(t, repoA, est["repos"].([]any)[0].(map[string]any)["repo_url"])

	// scan.cancelled: a slow live target keeps the scan running until the
	// cancellation.
	arrived := make(chan struct{}, 100)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(15 * time.Second):
			fmt.Fprint(w, `<html><body><a href="/more">more</a></body></html>`)
		}
	}))
	t.Cleanup(target.Close)
	running := startScan(t, org.WriteKey, estA, repoA, []string{target.URL + "/"})
	select {
	case <-arrived:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the scan never reached its live target\n%s", sys.Log.String())
	}
	r = do(t, "POST", "/scans/"+running+"/cancel", org.WriteKey, nil)
	require.Equal(t, 200, r.Status, string(r.Body))
	ev = verified(recv.WaitFor(t, 1, 2*time.Minute, "scan.cancelled", systest.OfType("scan.cancelled")))[0]
	require.Equal(t, running, dataOf(ev, "scan")["id"])
	require.Equal(t, "cancelled", dataOf(ev, "scan")["status"])
	require.NotContains(t, string(ev.Body), "auth_instructions")

	// scan.completed, after the findings it reported (finding.created).
	estB, repoB := estimate(t, org.WriteKey)
	waitStatus(t, org.ReadKey, "/cost-estimations/"+estB, "completed")
	done := startScan(t, org.WriteKey, estB, repoB, nil)
	waitStatus(t, org.ReadKey, "/scans/"+done+"/status", "completed")
	ev = verified(recv.WaitFor(t, 1, 2*time.Minute, "scan.completed", func(m systest.WebhookMessage) bool {
		return m.Type() == "scan.completed" && dataOf(m, "scan")["id"] == done
	}))[0]
	require.Equal(t, "completed", dataOf(ev, "scan")["status"])
	require.NotNil(t, dataOf(ev, "scan")["completed_at"])
	verified(recv.WaitFor(t, 1, time.Minute, "finding.created", systest.OfType("finding.created")))
	require.Len(t, recv.Matching(systest.OfType("scan.completed")), 1, "one scan completed, one event")

	// Durable: an estimation that ends while findings is down is delivered
	// once findings is back (the estimation service's job retries).
	require.NoError(t, sys.Terminate("findings"))
	estC, _ := estimate(t, org.WriteKey)
	waitStatus(t, org.ReadKey, "/cost-estimations/"+estC, "completed")
	require.NoError(t, sys.Restart("findings"))
	verified(recv.WaitFor(t, 1, 3*time.Minute, "estimation.completed of C after the outage", func(m systest.WebhookMessage) bool {
		return m.Type() == "estimation.completed" && dataOf(m, "estimation")["id"] == estC
	}))
	require.Len(t, recv.Matching(systest.OfType("estimation.completed")), 3, "three estimations, one event each")
}

// TestFailureEvents: an estimation whose only repository cannot be read
// ends failed and emits estimation.failed; a scan whose stored archive can
// no longer be unpacked fails for good and emits scan.failed.
func TestFailureEvents(t *testing.T) {
	org, err := sys.NewOrg(1000, "auto")
	require.NoError(t, err)
	recv := systest.NewWebhookReceiver(t)
	r := do(t, "POST", "/webhooks", org.WriteKey, map[string]any{"url": recv.URL + "/events",
		"events": []string{"estimation.failed", "scan.failed"}})
	require.Equal(t, 201, r.Status, string(r.Body))
	secret := r.JSON()["secret"].(string)
	verified := func(ms []systest.WebhookMessage) []systest.WebhookMessage {
		for _, m := range ms {
			require.True(t, m.Verify(secret), "signature of %s %s", m.Type(), m.ID)
			require.EqualValues(t, 1, m.Payload["version"])
		}
		return ms
	}

	// estimation.failed: the only repository is on a loopback host that
	// answers nothing but 404 (and whose certificate is not trusted).
	gone := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(gone.Close)
	r = do(t, "POST", "/cost-estimations", org.WriteKey, map[string]any{"repos": []map[string]any{{"source": "public", "repo_url": gone.URL + "/acme/gone.git"}}})
	require.Equal(t, 201, r.Status, string(r.Body))
	failedEst := r.JSON()["id"].(string)
	waitStatus(t, org.ReadKey, "/cost-estimations/"+failedEst, "failed")
	ev := verified(recv.WaitFor(t, 1, 2*time.Minute, "estimation.failed", func(m systest.WebhookMessage) bool {
		return m.Type() == "estimation.failed" && dataOf(m, "estimation")["id"] == failedEst
	}))[0]
	require.Equal(t, "failed", dataOf(ev, "estimation")["status"])

	// scan.failed: the upload's stored type is changed after its
	// estimation, so the worker cannot unpack it (a permanent failure).
	est, repo := estimate(t, org.WriteKey)
	waitStatus(t, org.ReadKey, "/cost-estimations/"+est, "completed")
	pool, err := pgxpool.New(context.Background(), sys.DatabaseURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	tag, err := pool.Exec(context.Background(), `UPDATE estimation.uploads SET content_type = 'application/gzip' WHERE org_id = $1`, org.ID)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())
	failedScan := startScan(t, org.WriteKey, est, repo, nil)
	s := waitStatus(t, org.ReadKey, "/scans/"+failedScan, "failed", "completed")
	require.Equal(t, "failed", s["status"], "%v", s)
	ev = verified(recv.WaitFor(t, 1, 2*time.Minute, "scan.failed", func(m systest.WebhookMessage) bool {
		return m.Type() == "scan.failed" && dataOf(m, "scan")["id"] == failedScan
	}))[0]
	require.Equal(t, "failed", dataOf(ev, "scan")["status"])
	require.Equal(t, s["error"], dataOf(ev, "scan")["error"])
}
