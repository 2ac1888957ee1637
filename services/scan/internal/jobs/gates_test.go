package jobs

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
	"github.com/vulnscan/vulnscan/services/scan/internal/store/storetest"
)

// TestRunScanGates: before any work, a run job checks that its scan exists,
// started and has not ended, and steps aside (a snooze of OrgBusySnooze)
// while its organization runs its share of scans.
func TestRunScanGates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t, "scan_jobs")
	org := uuid.NewString()
	w := &RunScanWorker{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxRunningPerOrg: 1, OrgBusySnooze: 3 * time.Second}
	run := func(id string) error {
		return w.Work(ctx, &river.Job[RunScan]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 3}, Args: RunScan{ScanID: id}})
	}
	var cancel *river.JobCancelError
	require.ErrorAs(t, run(uuid.NewString()), &cancel, "a missing scan")
	require.ErrorAs(t, run(storetest.Insert(t, st, storetest.Scan(org), vocab.ScanPending, store.Starting)), &cancel, "a start not finished")
	for _, s := range []vocab.ScanStatus{vocab.ScanCompleted, vocab.ScanFailed, vocab.ScanCancelled} {
		id := storetest.Insert(t, st, storetest.Scan(org), s, store.Started)
		require.NoError(t, run(id), s)
		status, err := st.Status(ctx, id)
		require.NoError(t, err)
		require.Equal(t, s, status, "an ended scan is not run again")
	}

	storetest.Insert(t, st, storetest.Scan(org), vocab.ScanRunning, store.Started)
	waiting := storetest.Insert(t, st, storetest.Scan(org), vocab.ScanPending, store.Started)
	var snooze *river.JobSnoozeError
	require.ErrorAs(t, run(waiting), &snooze)
	require.Equal(t, 3*time.Second, snooze.Duration)
	status, err := st.Status(ctx, waiting)
	require.NoError(t, err)
	require.Equal(t, vocab.ScanPending, status)
}
