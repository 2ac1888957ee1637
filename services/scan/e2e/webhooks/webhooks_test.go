// Package webhooks tests the scan and estimation services' webhook events
// end to end: a loopback receiver registered through the gateway gets
// estimation.completed, estimation.failed, finding.created, scan.completed,
// scan.failed and scan.cancelled, signed, from real estimations and scans;
// an estimation that ends while the findings service is down is delivered
// once it is back. It runs its own system (one scan worker) because it
// stops the findings service.
package webhooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	systest.Main(m, &sys, map[string]string{"VULNSCAN_RATE_LIMIT": "1000:2000", "SCAN_WORKERS": "1",
		"FINDINGS_WEBHOOK_POLL": "100ms", "FINDINGS_WEBHOOK_BACKOFF": "200ms", "FINDINGS_WEBHOOK_MAX_BACKOFF": "1s"})
}

func do(t *testing.T, method, path, key string, body any) systest.Response {
	t.Helper()
	return sys.Call(t, method, path, key, body)
}

// estimate starts an estimation of a fresh upload and returns its id and repository.
func estimate(t *testing.T, key string) (string, string) {
	t.Helper()
	repo := sys.Upload(t, key, systest.FlaskFiles)
	return sys.StartEstimation(t, key, map[string]any{"source": "upload", "repo_url": repo}), repo
}

// subscribe registers a webhook receiver for events and returns it with a
// check that messages are signed with the webhook's secret and of payload
// version 1.
func subscribe(t *testing.T, key string, events ...string) (*systest.WebhookReceiver, func([]systest.WebhookMessage) []systest.WebhookMessage) {
	t.Helper()
	recv := systest.NewWebhookReceiver(t)
	r := do(t, "POST", "/webhooks", key, map[string]any{"url": recv.URL + "/events", "events": events})
	require.Equal(t, 201, r.Status, string(r.Body))
	secret := r.JSON()["secret"].(string)
	return recv, func(ms []systest.WebhookMessage) []systest.WebhookMessage {
		for _, m := range ms {
			require.True(t, m.Verify(secret), "signature of %s %s", m.Type(), m.ID)
			require.EqualValues(t, 1, m.Payload["version"])
		}
		return ms
	}
}

func dataOf(m systest.WebhookMessage, kind string) map[string]any {
	d, _ := m.Data()[kind].(map[string]any)
	return d
}

func TestScanAndEstimationEvents(t *testing.T) {
	org, err := sys.NewOrg(1000, "auto")
	require.NoError(t, err)
	recv, verified := subscribe(t, org.WriteKey, "estimation.completed", "estimation.failed", "scan.completed", "scan.failed", "scan.cancelled", "finding.created")

	// estimation.completed.
	estA, repoA := estimate(t, org.WriteKey)
	sys.WaitStatus(t, org.ReadKey, "/cost-estimations/"+estA, "completed")
	ev := verified(recv.WaitFor(t, 1, 2*time.Minute, "estimation.completed of A", func(m systest.WebhookMessage) bool {
		return m.Type() == "estimation.completed" && dataOf(m, "estimation")["id"] == estA
	}))[0]
	est := dataOf(ev, "estimation")
	require.Equal(t, "completed", est["status"])
	require.Positive(t, est["total_credits"])
	require.Equal(t, repoA, est["repos"].([]any)[0].(map[string]any)["repo_url"])

	// scan.cancelled: a slow live target keeps the scan running until the
	// cancellation.
	target := systest.NewSlowSite(t)
	running := sys.StartScan(t, org.WriteKey, systest.UploadScan(estA, repoA, target.URL))
	sys.Await(t, target.Arrived, 2*time.Minute, "the scan reaching its live target")
	r := do(t, "POST", "/scans/"+running+"/cancel", org.WriteKey, nil)
	require.Equal(t, 200, r.Status, string(r.Body))
	ev = verified(recv.WaitFor(t, 1, 2*time.Minute, "scan.cancelled", systest.OfType("scan.cancelled")))[0]
	require.Equal(t, running, dataOf(ev, "scan")["id"])
	require.Equal(t, "cancelled", dataOf(ev, "scan")["status"])
	require.NotContains(t, string(ev.Body), "auth_instructions")

	// scan.completed, after the findings it reported (finding.created).
	estB, repoB := estimate(t, org.WriteKey)
	sys.WaitStatus(t, org.ReadKey, "/cost-estimations/"+estB, "completed")
	done := sys.StartScan(t, org.WriteKey, systest.UploadScan(estB, repoB))
	sys.WaitStatus(t, org.ReadKey, "/scans/"+done+"/status", "completed")
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
	sys.WaitStatus(t, org.ReadKey, "/cost-estimations/"+estC, "completed")
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
	recv, verified := subscribe(t, org.WriteKey, "estimation.failed", "scan.failed")

	// estimation.failed: the only repository is on a loopback host that
	// answers nothing but 404 (and whose certificate is not trusted).
	gone := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(gone.Close)
	r := do(t, "POST", "/cost-estimations", org.WriteKey, map[string]any{"repos": []map[string]any{{"source": "public", "repo_url": gone.URL + "/acme/gone.git"}}})
	require.Equal(t, 201, r.Status, string(r.Body))
	failedEst := r.JSON()["id"].(string)
	sys.WaitStatus(t, org.ReadKey, "/cost-estimations/"+failedEst, "failed")
	ev := verified(recv.WaitFor(t, 1, 2*time.Minute, "estimation.failed", func(m systest.WebhookMessage) bool {
		return m.Type() == "estimation.failed" && dataOf(m, "estimation")["id"] == failedEst
	}))[0]
	require.Equal(t, "failed", dataOf(ev, "estimation")["status"])

	// scan.failed: the upload's stored type is changed after its
	// estimation, so the worker cannot unpack it (a permanent failure).
	est, repo := estimate(t, org.WriteKey)
	sys.WaitStatus(t, org.ReadKey, "/cost-estimations/"+est, "completed")
	pool, err := pgxpool.New(context.Background(), sys.DatabaseURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	tag, err := pool.Exec(context.Background(), `UPDATE estimation.uploads SET content_type = 'application/gzip' WHERE org_id = $1`, org.ID)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())
	failedScan := sys.StartScan(t, org.WriteKey, systest.UploadScan(est, repo))
	s := sys.WaitStatus(t, org.ReadKey, "/scans/"+failedScan, "failed", "completed")
	require.Equal(t, "failed", s["status"], "%v", s)
	ev = verified(recv.WaitFor(t, 1, 2*time.Minute, "scan.failed", func(m systest.WebhookMessage) bool {
		return m.Type() == "scan.failed" && dataOf(m, "scan")["id"] == failedScan
	}))[0]
	require.Equal(t, "failed", dataOf(ev, "scan")["status"])
	require.Equal(t, s["error"], dataOf(ev, "scan")["error"])
}
