// Package timeout tests the refund rule of a scan that uses its whole
// attempt, on a system whose scan job timeout is one second.
package timeout

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	systest.Main(m, &sys, map[string]string{
		"VULNSCAN_RATE_LIMIT": "1000:2000",
		"SCAN_JOB_TIMEOUT":    "1s",
	})
}

// largeApp is an upload of 2,000 Python modules, each with injectable
// calls: its analysis takes far longer than one second.
func largeApp() map[string]string {
	files := map[string]string{}
	for i := 0; i < 2000; i++ {
		var w strings.Builder
		fmt.Fprintf(&w, "import os\nimport sqlite3\nfrom flask import Flask, request\napp = Flask(__name__)\n\n")
		for j := 0; j < 20; j++ {
			fmt.Fprintf(&w, "@app.route('/r%d_%d')\ndef r%d_%d():\n    os.system('ls ' + request.args.get('d'))\n    c = sqlite3.connect('a.db')\n    return str(c.execute(\"SELECT * FROM t WHERE n = '\" + request.args.get('n') + \"'\").fetchall())\n\n", i, j, i, j)
		}
		files[fmt.Sprintf("pkg%02d/mod%04d.py", i%40, i)] = w.String()
	}
	return files
}

// TestTimedOutScanIsNotRefunded: a scan whose attempt reaches
// SCAN_JOB_TIMEOUT fails after that one attempt with the documented message,
// and its credits stay used; the worker's scratch directory is left empty.
func TestTimedOutScanIsNotRefunded(t *testing.T) {
	org, err := sys.NewOrg(100000, "auto")
	require.NoError(t, err)

	estID, repo, credits := sys.Estimated(t, org.WriteKey, largeApp())
	scanID := sys.StartScan(t, org.WriteKey, systest.UploadScan(estID, repo))
	require.Equal(t, 100000-credits, sys.Balance(t, org.ReadKey))

	s := sys.WaitScan(t, org.ReadKey, scanID)
	require.Equal(t, "failed", s["status"], "%v", s)
	require.Equal(t, "The scan did not finish within its time limit of 1s; the repositories or targets are too large or too slow to scan, and the credits are not refunded", s["error"])
	require.NotNil(t, s["started_at"])
	require.Equal(t, 100000-credits, sys.Balance(t, org.ReadKey), "a scan that used its whole attempt keeps its credits")

	// One attempt, and the job is finished: no retry follows.
	attempt, state := sys.WaitScanJob(t, scanID)
	require.Equal(t, "completed", state)
	require.Equal(t, 1, attempt)

	// The attempt's scratch tree and downloaded archive are gone.
	entries, err := os.ReadDir(filepath.Join(sys.DataDir, "scans"))
	require.NoError(t, err)
	require.Empty(t, entries)
}
