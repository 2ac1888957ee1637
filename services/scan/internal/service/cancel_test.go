package service_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/vulnscan/vulnscan/pkg/vocab"
	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/jobs"
)

// TestCancelPendingScanRefunds: a pending scan never ran, so cancelling it
// refunds its credits at once, releases its estimation and records the
// undo job that makes the refund durable.
func TestCancelPendingScanRefunds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	estID := e.estimation(nil)
	started, err := e.svc.CreateScan(e.ctx, &scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, "main")}, CostEstimationId: estID})
	require.NoError(t, err)
	require.Equal(t, int32(88), balance(e.ledger))

	out, err := e.svc.CancelScan(e.ctx, &scanv1.CancelScanRequest{Id: started.GetId()})
	require.NoError(t, err)
	require.Equal(t, started.GetId(), out.GetId())
	require.Equal(t, "cancelled", out.GetStatus())
	require.Equal(t, int32(12), out.GetCreditsRefunded())
	require.Equal(t, int32(100), balance(e.ledger))
	require.Empty(t, e.est.Claimant(estID), "the estimation can be claimed again")

	var undo int
	require.NoError(t, e.st.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM scan.river_job WHERE kind = $1 AND args->>'scan_id' = $2`, jobs.UndoCancelledStart{}.Kind(), started.GetId()).Scan(&undo))
	require.Equal(t, 1, undo)

	// Cancelling again is a conflict and refunds nothing more.
	_, err = e.svc.CancelScan(e.ctx, &scanv1.CancelScanRequest{Id: started.GetId()})
	requireStatus(t, err, codes.AlreadyExists, "Scan is already cancelled; only a pending or running scan can be cancelled")
	require.Equal(t, int32(100), balance(e.ledger))
}

// TestCancelRunningScanKeepsCredits: a running scan has used its credits.
func TestCancelRunningScanKeepsCredits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.scan(t, e.org, vocab.ScanRunning)
	out, err := e.svc.CancelScan(e.ctx, &scanv1.CancelScanRequest{Id: id})
	require.NoError(t, err)
	require.Equal(t, "cancelled", out.GetStatus())
	require.Zero(t, out.GetCreditsRefunded())
	require.Equal(t, int32(100), balance(e.ledger))
	status, err := e.st.Status(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, vocab.ScanCancelled, status)
}

func TestCancelScanErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for name, tc := range map[string]struct {
		id   string
		code codes.Code
		msg  string
	}{
		"not a uuid": {"x", codes.InvalidArgument, "id must be a valid UUID"},
		"unknown":    {uuid.NewString(), codes.NotFound, "Scan not found"},
		"foreign":    {e.scan(t, uuid.NewString(), vocab.ScanPending), codes.NotFound, "Scan not found"},
		"completed":  {e.scan(t, e.org, vocab.ScanCompleted), codes.AlreadyExists, "Scan is already completed; only a pending or running scan can be cancelled"},
		"cancelled":  {e.scan(t, e.org, vocab.ScanCancelled), codes.AlreadyExists, "Scan is already cancelled; only a pending or running scan can be cancelled"},
		"failed":     {e.scan(t, e.org, vocab.ScanFailed), codes.AlreadyExists, "Scan is already failed; only a pending or running scan can be cancelled"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := e.svc.CancelScan(e.ctx, &scanv1.CancelScanRequest{Id: tc.id})
			requireStatus(t, err, tc.code, tc.msg)
		})
	}
}
