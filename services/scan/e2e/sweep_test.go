package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/server"
	"github.com/vulnscan/vulnscan/pkg/systest"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/jobs"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// TestSweepStrandedScan: River discards the job of a worker that died on
// its last attempt without running the worker again; the sweeper must then
// fail the scan and refund it, and leave scans with a live job alone.
func TestSweepStrandedScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, sys.DatabaseURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	cc, err := sys.Dial("auth", mtls.Scan, false)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	st := &store.Store{Pool: pool}
	sweeper := &jobs.SweepStrandedWorker{Compensations: &lifecycle.Compensations{Store: st, Auth: authv1.NewAuthInternalServiceClient(cc)}, Log: quietLog(), Idle: time.Minute}

	org := newOrg(t, 100, "auto")
	start := func() string {
		estID, repoURL, _ := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
		r := post(t, org.WriteKey, scanBody(estID, repoURL, nil))
		require.Equal(t, 201, r.Status, string(r.Body))
		id := r.JSON()["id"].(string)
		waitScan(t, sys, org.ReadKey, id, 90*time.Second)
		return id
	}
	stranded, alive := start(), start()
	require.Less(t, sys.Balance(t, org.WriteKey), 100)
	before := sys.Balance(t, org.WriteKey)

	// Put both scans back to running, idle for ten minutes; the first one's
	// job is discarded, the second one's is still queued.
	for _, id := range []string{stranded, alive} {
		_, err := pool.Exec(ctx, `UPDATE scan.scans SET status = 'running', completed_at = NULL, updated_at = now() - interval '10 minutes' WHERE id = $1`, id)
		require.NoError(t, err)
	}
	_, err = pool.Exec(ctx, `UPDATE scan.river_job SET state = 'discarded', finalized_at = now() WHERE kind = 'run_scan' AND args->>'scan_id' = $1`, stranded)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE scan.river_job SET state = 'scheduled', scheduled_at = now() + interval '1 hour', finalized_at = NULL WHERE kind = 'run_scan' AND args->>'scan_id' = $1`, alive)
	require.NoError(t, err)

	require.NoError(t, sweeper.Work(ctx, &river.Job[jobs.SweepStranded]{}))

	s, err := st.ByID(ctx, stranded)
	require.NoError(t, err)
	require.Equal(t, vocab.ScanFailed, s.Status)
	require.NotNil(t, s.Error)
	a, err := st.ByID(ctx, alive)
	require.NoError(t, err)
	require.Equal(t, vocab.ScanRunning, a.Status, "a scan with a live job is not swept")
	refunded := sys.Balance(t, org.WriteKey) - before
	require.Equal(t, int(s.Credits), refunded, "the stranded scan's credits come back")

	// Sweeping again changes nothing (the refund is idempotent).
	require.NoError(t, sweeper.Work(ctx, &river.Job[jobs.SweepStranded]{}))
	require.Equal(t, before+refunded, sys.Balance(t, org.WriteKey))

	// When the refund cannot be made, the scan stays unfinished, so that a
	// later sweep refunds it and fails it.
	_, err = pool.Exec(ctx, `UPDATE scan.scans SET status = 'running', error = NULL, completed_at = NULL, updated_at = now() - interval '10 minutes' WHERE id = $1`, alive)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE scan.river_job SET state = 'discarded', finalized_at = now() WHERE kind = 'run_scan' AND args->>'scan_id' = $1`, alive)
	require.NoError(t, err)
	scanID, err := sys.Identity(mtls.Scan)
	require.NoError(t, err)
	deadAuth, err := server.Dial("127.0.0.1:1", scanID, "auth")
	require.NoError(t, err)
	t.Cleanup(func() { _ = deadAuth.Close() })
	broken := &jobs.SweepStrandedWorker{Compensations: &lifecycle.Compensations{Store: st, Auth: authv1.NewAuthInternalServiceClient(deadAuth)}, Log: quietLog(), Idle: time.Minute}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	require.Error(t, broken.Work(short, &river.Job[jobs.SweepStranded]{}))
	a, err = st.ByID(ctx, alive)
	require.NoError(t, err)
	require.Equal(t, vocab.ScanRunning, a.Status, "not failed before its credits are back")
	require.NoError(t, sweeper.Work(ctx, &river.Job[jobs.SweepStranded]{}))
	a, err = st.ByID(ctx, alive)
	require.NoError(t, err)
	require.Equal(t, vocab.ScanFailed, a.Status)
	require.Equal(t, before+refunded+int(a.Credits), sys.Balance(t, org.WriteKey))
}
