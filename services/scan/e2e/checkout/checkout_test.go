// Package checkout tests the scan worker's checkout budgets end to end: a
// repository that passes estimation but whose commit holds more files than
// the worker may write, served by a local HTTPS git server on loopback.
package checkout

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/gittest"
	"github.com/vulnscan/vulnscan/pkg/systest"
)

var (
	sys *systest.System
	git *gittest.Server
)

// maxFiles is the worker's file budget on this system; estimation keeps its
// own default, so a repository above it passes estimation.
const maxFiles = 10

func TestMain(m *testing.M) {
	var err error
	if git, err = gittest.New(gittest.Options{TLS: true}); err != nil {
		fmt.Fprintln(os.Stderr, "git server:", err)
		os.Exit(1)
	}
	code := systest.Run(m, systest.Options{Env: map[string]string{
		"VULNSCAN_RATE_LIMIT":     "1000:2000",
		"VULNSCAN_EXTRA_CA_FILE":  git.CAFile,
		"SCAN_CHECKOUT_MAX_FILES": fmt.Sprint(maxFiles),
	}}, &sys)
	git.Close()
	os.Exit(code)
}

// publish makes a repository of files Python modules on branch main and
// returns its URL.
func publish(t *testing.T, name string, files int) string {
	t.Helper()
	tree := map[string]string{}
	for i := 0; i < files; i++ {
		tree[fmt.Sprintf("mod%03d.py", i)] = fmt.Sprintf("import os\n\n\ndef f%d(d):\n    os.system('ls ' + d)\n", i)
	}
	git.Publish(t, name, tree)
	return git.URL(name)
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

	est := sys.Estimate(t, org.WriteKey, map[string]any{"source": "public", "repo_url": url})
	require.Equal(t, "completed", est["status"], "%v", est)
	credits := int(est["total_credits"].(float64))
	require.Positive(t, credits)

	scanID := sys.StartScan(t, org.WriteKey, map[string]any{"cost_estimation_id": est["id"], "repos": []map[string]any{{"url": url, "branch": "main", "source": "public"}}})
	require.Equal(t, 1000-credits, sys.Balance(t, org.ReadKey))

	s := sys.WaitScan(t, org.ReadKey, scanID)
	require.Equal(t, "failed", s["status"], "%v", s)
	require.Equal(t, "Repository "+url+" exceeds the size limit", s["error"])
	require.Equal(t, 1000, sys.Balance(t, org.ReadKey), "a scan refused by its bounds before analysis is refunded")

	attempt, state := sys.WaitScanJob(t, scanID)
	require.Equal(t, "completed", state)
	require.Equal(t, 1, attempt, "a refused checkout is not retried")

	entries, err := os.ReadDir(filepath.Join(sys.DataDir, "scans"))
	require.NoError(t, err)
	require.Empty(t, entries, "the worker's scratch directory is empty after the refused checkout")
}
