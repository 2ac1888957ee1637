// Package fold keeps the findings counters small: list totals are sums of
// delta rows that every change appends (so that concurrent writers never
// lock a counter row), and the fold worker periodically replaces the rows
// of each changed counter key by their sum.
package fold

import (
	"context"
	"log/slog"
	"time"

	"github.com/vulnscan/vulnscan/services/findings/internal/outbox"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// Worker folds pending counter deltas until its context ends.
type Worker struct {
	Store *store.Store
	Log   *slog.Logger
	Every time.Duration // pause between rounds once nothing is pending
	Keys  int           // counter keys folded per statement
}

// Run folds every Every; a round that removed at least Keys rows goes on
// at once, so a burst of reports is folded in a few rounds.
func (w *Worker) Run(ctx context.Context) error {
	return outbox.Loop(ctx, w.Every, w.Log, "folding counters failed", w.Once)
}

// Once folds one round and says whether more may be pending.
func (w *Worker) Once(ctx context.Context) (more bool, err error) {
	n, err := w.Store.FoldCounts(ctx, w.Keys)
	return err == nil && n >= int64(w.Keys), err
}
