// Package crash kills the scan worker in the middle of a scan and checks
// that the scan is taken up again and completes exactly once.
package crash

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	systest.Main(m, &sys, map[string]string{
		"VULNSCAN_RATE_LIMIT":   "1000:2000",
		"SCAN_JOB_TIMEOUT":      "20s",
		"SCAN_JOB_RESCUE_AFTER": "21s",
	})
}

// slowScan starts a scan whose live target answers slowly until told
// otherwise, and waits until the scan is running mid-probe.
func slowScan(t *testing.T) (org systest.Org, scanID string, fast func()) {
	t.Helper()
	org, err := sys.NewOrg(100, "auto")
	require.NoError(t, err)
	var slow atomic.Bool
	var hits atomic.Int64
	slow.Store(true)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if slow.Load() {
			time.Sleep(time.Second)
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>hello</body></html>"))
	}))
	t.Cleanup(target.Close)

	estID, repoURL, _ := sys.Estimated(t, org.WriteKey, map[string]string{"app.py": systest.ShellApp})
	scanID = sys.StartScan(t, org.WriteKey, systest.UploadScan(estID, repoURL, target.URL+"/"))
	require.Eventually(t, func() bool { return status(org, scanID) == "running" && hits.Load() > 0 }, 60*time.Second, 50*time.Millisecond)
	return org, scanID, func() { slow.Store(false) }
}

func status(org systest.Org, scanID string) string {
	g, err := sys.Do("GET", "/scans/"+scanID+"/status", org.ReadKey, nil)
	if err != nil {
		return ""
	}
	st, _ := g.JSON()["status"].(string)
	return st
}

// requireCompletedOnce checks that every finding of the scan appears once.
func requireCompletedOnce(t *testing.T, org systest.Org, scanID string) {
	t.Helper()
	f, err := sys.Do("GET", "/scans/"+scanID+"/findings?limit=100", org.ReadKey, nil)
	require.NoError(t, err)
	require.Equal(t, 200, f.Status, string(f.Body))
	data := f.JSON()["data"].([]any)
	require.NotEmpty(t, data)
	seen := map[string]bool{}
	for _, x := range data {
		fi := x.(map[string]any)
		key := fi["title"].(string) + "|" + fi["affected_file"].(string)
		require.False(t, seen[key], "duplicate finding %s", key)
		seen[key] = true
		one, err := sys.Do("GET", "/findings/"+fi["id"].(string), org.ReadKey, nil)
		require.NoError(t, err)
		require.EqualValues(t, 1, one.JSON()["occurrence_count"])
	}
	d, err := sys.Do("GET", "/scans/"+scanID, org.ReadKey, nil)
	require.NoError(t, err)
	require.EqualValues(t, 100, d.JSON()["progress"])
}

// The tests run one after the other: each stops the one scan process.

func TestWorkerKilledMidScanCompletesOnce(t *testing.T) {
	org, scanID, fast := slowScan(t)
	require.NoError(t, sys.Kill("scan"))
	fast()
	require.NoError(t, sys.Restart("scan"))
	require.Eventually(t, func() bool { return status(org, scanID) == "completed" }, 150*time.Second, 250*time.Millisecond,
		"the scan must be taken up again after the worker died")
	requireCompletedOnce(t, org, scanID)
	c, err := sys.Do("GET", "/credits", org.ReadKey, nil)
	require.NoError(t, err)
	require.Less(t, c.JSON()["balance"].(float64), 100.0, "a completed scan keeps its debit")
}

func TestWorkerStoppedGracefullyHandsScanBack(t *testing.T) {
	org, scanID, fast := slowScan(t)
	require.NoError(t, sys.Terminate("scan"), "the worker must stop within its grace period")
	fast()
	require.NoError(t, sys.Restart("scan"))
	// Well before a dead worker's job would be rescued (21s plus the
	// rescuer's interval), the handed-back scan is picked up again.
	require.Eventually(t, func() bool { return status(org, scanID) == "completed" }, 15*time.Second, 100*time.Millisecond,
		"a scan interrupted by SIGTERM must go back to the queue at once")
	requireCompletedOnce(t, org, scanID)
}
