// Package fold keeps the findings counters small: list totals are sums of
// delta rows that every change appends (so that concurrent writers never
// lock a counter row), and the fold worker periodically replaces the rows
// of each changed counter key by their sum.
package fold

import (
	"context"

	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// Worker folds pending counter deltas, a round at a time; the service runs
// its rounds every FINDINGS_COUNT_FOLD_EVERY in the shared loop
// (outbox.Loop).
type Worker struct {
	Store *store.Store
	Keys  int // counter keys folded per statement
}

// Once folds one round. It says there may be more pending when the round
// removed at least Keys rows, so a burst of reports is folded in a few
// rounds in a row.
func (w *Worker) Once(ctx context.Context) (more bool, err error) {
	n, err := w.Store.FoldCounts(ctx, w.Keys)
	return err == nil && n >= int64(w.Keys), err
}
