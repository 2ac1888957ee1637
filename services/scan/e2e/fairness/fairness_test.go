// Package fairness tests the scheduling of scans across organizations end
// to end: with two scan workers and at most one running scan per
// organization, one organization's queue cannot hold every worker.
package fairness

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	systest.Main(m, &sys, map[string]string{
		"VULNSCAN_RATE_LIMIT":      "1000:2000",
		"SCAN_WORKERS":             "2",
		"SCAN_MAX_RUNNING_PER_ORG": "1",
	})
}

// estimation uploads a small application, estimates it and returns the
// estimation id and the repository URL.
func estimation(t *testing.T, key string) (string, string) {
	t.Helper()
	id, repo, _ := sys.Estimated(t, key, map[string]string{"app.py": systest.ShellApp})
	return id, repo
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
	// The live target holds each page 15 s, with links to more pages,
	// until released.
	target := systest.NewSlowSite(t)

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
	scansA[0] = sys.StartScan(t, a.WriteKey, systest.UploadScan(estA[0], repoA[0], target.URL))
	sys.Await(t, target.Arrived, 2*time.Minute, "A's first scan reaching its live target")
	for i := 1; i < len(scansA); i++ {
		scansA[i] = sys.StartScan(t, a.WriteKey, systest.UploadScan(estA[i], repoA[i], target.URL))
	}
	scanB := sys.StartScan(t, b.WriteKey, systest.UploadScan(estB, repoB))

	sB := sys.WaitScan(t, b.ReadKey, scanB)
	require.Equal(t, "completed", sB["status"], "%v", sB)
	// Observed at B's completion: A's queue has not moved on.
	for _, id := range scansA[1:] {
		s := sys.Get(t, a.ReadKey, "/scans/"+id)
		require.Equal(t, "pending", s["status"], "A's scan %s ran before B's completed: %v", id, s)
		require.Nil(t, s["started_at"])
	}

	target.Release()
	finished := map[string]map[string]any{}
	for _, id := range scansA {
		finished[id] = sys.WaitScan(t, a.ReadKey, id)
	}

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
