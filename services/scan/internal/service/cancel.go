package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/validate"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// CancelScan stops a pending or running scan. The refund rule:
//
//   - pending: the scan never ran, so it is undone like a failed start —
//     its credits are refunded in full and its estimation is released, so it
//     can be claimed again by a new scan;
//   - running: the worker has already spent work on it, so the credits stay
//     used and the estimation stays claimed. The worker that holds the scan
//     notices the cancellation within its poll interval and stops; findings
//     it reported before stay visible.
//
// The status change and the job that undoes a pending start are written in
// one transaction, so the refund is durable; the undo is also tried at once,
// so that the balance is back when the response is sent in the normal case.
// A scan that already ended (completed, failed, cancelled) answers 409.
func (s *Service) CancelScan(ctx context.Context, req *scanv1.CancelScanRequest) (*scanv1.CancelScanResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	var sc store.Scan
	var previous vocab.ScanStatus
	err = db.InTx(ctx, s.Starter.Pool, func(tx pgx.Tx) error {
		var err error
		sc, previous, err = s.Store.Cancel(ctx, tx, caller.OrgID, req.GetId())
		if err != nil || previous != vocab.ScanPending {
			return err
		}
		return s.Starter.Queue.UndoCancelledStart(ctx, tx, sc.ID)
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, apierr.NotFound("Scan not found")
	case errors.Is(err, store.ErrTerminal):
		return nil, apierr.Conflict("Scan is already %s; only a pending or running scan can be cancelled", sc.Status)
	case err != nil:
		return nil, fmt.Errorf("cancel scan: %w", err)
	}
	out := &scanv1.CancelScanResponse{Id: sc.ID, Status: string(sc.Status)}
	if previous == vocab.ScanPending {
		out.CreditsRefunded = sc.Credits
		if err := s.Starter.compensations().GiveBack(ctx, sc); err != nil {
			s.Log.WarnContext(ctx, "undoing a cancelled scan's start failed; the queued job will retry", "scan_id", sc.ID, "error", err.Error())
		}
	}
	s.Log.InfoContext(ctx, "scan cancelled", "scan_id", sc.ID, "was", previous)
	return out, nil
}
