// Package expiry ends risk acceptances that carry an end: it reopens
// accepted_risk findings whose expires_at has passed, as the agent.
package expiry

import (
	"context"
	"log/slog"
	"time"

	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// Worker reopens expired risk acceptances; the service runs it every
// FINDINGS_RISK_EXPIRY_EVERY in the shared loop (outbox.Loop).
type Worker struct {
	Store *store.Store
	Log   *slog.Logger
	// Batch bounds the findings reopened per transaction.
	Batch int
	// Now is the worker's clock; nil means time.Now. Tests set it to move
	// past an acceptance's end without waiting.
	Now func() time.Time
}

// Round is Once as a round of the loop: it reopens everything due, so the
// loop need not come back before its next tick.
func (w *Worker) Round(ctx context.Context) (more bool, err error) {
	_, err = w.Once(ctx)
	return false, err
}

// Once reopens every acceptance expired by the worker's clock, a batch per
// transaction, and returns how many it reopened.
func (w *Worker) Once(ctx context.Context) (int, error) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	batch := w.Batch
	if batch <= 0 {
		batch = 500
	}
	total := 0
	for {
		n, err := w.Store.ReopenExpired(ctx, now(), batch)
		total += n
		if err != nil || n < batch {
			if n > 0 || total > 0 {
				w.Log.InfoContext(ctx, "reopened findings whose risk acceptance expired", "count", total)
			}
			return total, err
		}
	}
}
