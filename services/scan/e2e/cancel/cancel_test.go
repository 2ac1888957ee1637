// Package cancel tests scan cancellation end to end through the gateway, on
// a system with a single scan worker, so that a second scan stays pending
// while the first one runs.
package cancel

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	systest.Main(m, &sys, map[string]string{"VULNSCAN_RATE_LIMIT": "1000:2000", "SCAN_WORKERS": "1"})
}

// TestCancel: a running scan stops on its worker and keeps its credits; a
// pending one never starts, is refunded in full and frees its estimation;
// terminal, foreign and malformed cancels are refused with the spec's body.
func TestCancel(t *testing.T) {
	// A slow live target keeps the first scan running; only a cancellation
	// of the scan makes the scanner abandon its request.
	target := systest.NewSlowSite(t)

	org, err := sys.NewOrg(1000, "auto")
	require.NoError(t, err)
	other, err := sys.NewOrg(1000, "auto")
	require.NoError(t, err)

	estA, repoA, creditsA := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
	estB, repoB, creditsB := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
	running := sys.StartScan(t, org.WriteKey, systest.UploadScan(estA, repoA, target.URL))
	sys.Await(t, target.Arrived, 2*time.Minute, "the scan reaching its live target")
	require.Equal(t, "running", sys.Get(t, org.ReadKey, "/scans/"+running)["status"])

	// The only worker is busy: the second scan waits.
	pending := sys.StartScan(t, org.WriteKey, systest.UploadScan(estB, repoB))
	require.Equal(t, "pending", sys.Get(t, org.ReadKey, "/scans/"+pending)["status"])
	require.Equal(t, 1000-creditsA-creditsB, sys.Balance(t, org.ReadKey))

	t.Run("refused", func(t *testing.T) {
		systest.RequireError(t, sys.Call(t, "POST", "/scans/"+pending+"/cancel", org.ReadKey, nil), 403, "write")
		systest.RequireError(t, sys.Call(t, "POST", "/scans/"+pending+"/cancel", other.WriteKey, nil), 404, "Scan not found")
		systest.RequireError(t, sys.Call(t, "POST", "/scans/00000000-0000-4000-8000-000000000000/cancel", org.WriteKey, nil), 404, "Scan not found")
		systest.RequireError(t, sys.Call(t, "POST", "/scans/nope/cancel", org.WriteKey, nil), 400, "id")
		systest.RequireError(t, sys.Call(t, "POST", "/scans/"+pending+"/cancel", org.WriteKey, map[string]any{"force": true}), 400, "force")
		require.Equal(t, "pending", sys.Get(t, org.ReadKey, "/scans/"+pending)["status"])
	})

	// Pending: cancelled at once, refunded in full, estimation claimable again.
	r := sys.Call(t, "POST", "/scans/"+pending+"/cancel", org.WriteKey, nil)
	require.Equal(t, 200, r.Status, string(r.Body))
	require.Equal(t, "cancelled", r.JSON()["status"])
	require.EqualValues(t, creditsB, r.JSON()["credits_refunded"])
	require.Equal(t, 1000-creditsA, sys.Balance(t, org.ReadKey))
	systest.RequireError(t, sys.Call(t, "POST", "/scans/"+pending+"/cancel", org.WriteKey, nil), 409, "already cancelled")
	again := sys.StartScan(t, org.WriteKey, systest.UploadScan(estB, repoB))
	r = sys.Call(t, "POST", "/scans/"+again+"/cancel", org.WriteKey, map[string]any{})
	require.Equal(t, 200, r.Status, string(r.Body))
	require.Equal(t, 1000-creditsA, sys.Balance(t, org.ReadKey))

	// Running: the worker stops it, its credits stay used.
	r = sys.Call(t, "POST", "/scans/"+running+"/cancel", org.WriteKey, nil)
	require.Equal(t, 200, r.Status, string(r.Body))
	require.Equal(t, "cancelled", r.JSON()["status"])
	require.EqualValues(t, 0, r.JSON()["credits_refunded"])
	sys.Await(t, target.Aborted, 2*time.Minute, "the worker giving up the live target's request")
	sys.WaitScanJob(t, running)
	// Info lines are written in batches, up to 50 ms after they are logged.
	require.Eventually(t, func() bool { return hasLogLine(running, "stopped a cancelled scan") }, 10*time.Second, 20*time.Millisecond,
		"the worker stopped because the scan was cancelled, not because a request timed out")
	requests := target.Hits()

	// The worker is free now: the cancelled pending scans never start.
	for _, id := range []string{pending, again} {
		sys.WaitScanJob(t, id)
		s := sys.Get(t, org.ReadKey, "/scans/"+id)
		require.Equal(t, "cancelled", s["status"])
		require.Nil(t, s["started_at"], "a scan cancelled while pending never starts")
		require.NotNil(t, s["completed_at"])
	}
	s := sys.Get(t, org.ReadKey, "/scans/"+running)
	require.Equal(t, "cancelled", s["status"])
	require.NotNil(t, s["started_at"])
	require.Nil(t, s["error"])
	require.Equal(t, requests, target.Hits(), "a cancelled scan sends no more requests")
	require.Equal(t, 1000-creditsA, sys.Balance(t, org.ReadKey))
	systest.RequireError(t, sys.Call(t, "POST", "/scans/"+running+"/cancel", org.WriteKey, nil), 409, "already cancelled")

	t.Run("list filter", func(t *testing.T) {
		l := sys.Call(t, "GET", "/scans?status=cancelled", org.ReadKey, nil)
		require.Equal(t, 200, l.Status, string(l.Body))
		require.EqualValues(t, 3, l.JSON()["total"])
		systest.RequireError(t, sys.Call(t, "GET", "/scans?status=stopped", org.ReadKey, nil), 400, "status")
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
