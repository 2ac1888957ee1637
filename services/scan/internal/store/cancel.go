package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// ErrTerminal is returned when a scan that already ended is cancelled.
var ErrTerminal = errors.New("scan already ended")

// Cancel moves a pending or running started scan of the organization to
// cancelled inside tx and returns the scan with the status it had before.
// The row is locked first, so a worker's SetRunning either happened before
// (the scan was running) or finds the scan cancelled and never starts it.
// A missing or foreign scan is ErrNotFound; one that already ended is
// ErrTerminal (sc.Status then holds its status).
func (st *Store) Cancel(ctx context.Context, tx pgx.Tx, orgID, id string) (sc Scan, previous vocab.ScanStatus, err error) {
	err = tx.QueryRow(ctx, `SELECT status FROM scan.scans WHERE id = $1 AND org_id = $2 AND start_state = 'started' FOR UPDATE`, id, orgID).Scan(&previous)
	if errors.Is(err, pgx.ErrNoRows) {
		return sc, "", ErrNotFound
	}
	if err != nil {
		return sc, "", fmt.Errorf("lock scan: %w", err)
	}
	if previous != vocab.ScanPending && previous != vocab.ScanRunning {
		sc.ID, sc.Status = id, previous
		return sc, previous, ErrTerminal
	}
	sc, err = scanScan(tx.QueryRow(ctx, `UPDATE scan.scans SET status = 'cancelled', completed_at = now(), updated_at = now()
		WHERE id = $1 RETURNING `+scanColumns, id))
	if err != nil {
		return sc, "", fmt.Errorf("cancel scan: %w", err)
	}
	if err := st.ended(ctx, tx, id, vocab.ScanCancelled); err != nil {
		return sc, "", err
	}
	return sc, previous, nil
}

// Status returns a scan's status, for workers that watch for cancellation.
func (st *Store) Status(ctx context.Context, id string) (vocab.ScanStatus, error) {
	var s vocab.ScanStatus
	err := st.Pool.QueryRow(ctx, `SELECT status FROM scan.scans WHERE id = $1`, id).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	return s, err
}
