package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
	"github.com/vulnscan/vulnscan/services/scan/internal/store/storetest"
)

// TestEndedHook: every way a scan ends (completed, failed, cancelled) calls
// Ended once, inside the ending transaction, so a webhook event is queued
// with the status change or not at all; an end that changes nothing calls
// nothing.
func TestEndedHook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t, key)
	pool := st.Pool
	var calls []string
	fail := false
	st.Ended = func(ctx context.Context, tx pgx.Tx, id string, status vocab.ScanStatus) error {
		// Inside the transaction: the new status is visible to it.
		var seen string
		if err := tx.QueryRow(ctx, `SELECT status FROM scan.scans WHERE id = $1`, id).Scan(&seen); err != nil {
			return err
		}
		calls = append(calls, seen+"/"+string(status))
		if fail {
			return errors.New("queue down")
		}
		return nil
	}
	org := uuid.NewString()
	insert := func(status vocab.ScanStatus) string {
		return storetest.Insert(t, st, storetest.Scan(org), status, store.Started)
	}
	status := func(id string) string {
		var s string
		require.NoError(t, pool.QueryRow(ctx, `SELECT status FROM scan.scans WHERE id = $1`, id).Scan(&s))
		return s
	}

	a := insert(vocab.ScanRunning)
	require.NoError(t, st.Complete(ctx, a))
	b := insert(vocab.ScanRunning)
	ok, err := st.Fail(ctx, b, "boom")
	require.NoError(t, err)
	require.True(t, ok)
	c := insert(vocab.ScanPending)
	require.NoError(t, db.InTx(ctx, pool, func(tx pgx.Tx) error { _, _, err := st.Cancel(ctx, tx, org, c); return err }))
	require.Equal(t, []string{"completed/completed", "failed/failed", "cancelled/cancelled"}, calls)

	// Already ended: nothing changes, nothing is queued.
	require.NoError(t, st.Complete(ctx, c))
	ok, err = st.Fail(ctx, a, "late")
	require.NoError(t, err)
	require.False(t, ok)
	require.Len(t, calls, 3)

	// When the event cannot be queued, the status does not change either.
	fail = true
	d := insert(vocab.ScanRunning)
	require.Error(t, st.Complete(ctx, d))
	require.Equal(t, "running", status(d))
	_, err = st.Fail(ctx, d, "boom")
	require.Error(t, err)
	require.Equal(t, "running", status(d))
}
