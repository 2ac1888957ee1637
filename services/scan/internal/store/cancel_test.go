package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
	"github.com/vulnscan/vulnscan/services/scan/internal/store/storetest"
)

// key names this package's template database.
const key = "scan_store"

func TestCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t, key)
	org := uuid.NewString()
	cancel := func(orgID, id string) (store.Scan, vocab.ScanStatus, error) {
		var sc store.Scan
		var prev vocab.ScanStatus
		err := db.InTx(ctx, st.Pool, func(tx pgx.Tx) error {
			var err error
			sc, prev, err = st.Cancel(ctx, tx, orgID, id)
			return err
		})
		return sc, prev, err
	}

	tests := []struct {
		name       string
		status     vocab.ScanStatus
		startState store.StartState
		otherOrg   bool
		wantErr    error
	}{
		{name: "pending", status: vocab.ScanPending, startState: store.Started},
		{name: "running", status: vocab.ScanRunning, startState: store.Started},
		{name: "completed", status: vocab.ScanCompleted, startState: store.Started, wantErr: store.ErrTerminal},
		{name: "failed", status: vocab.ScanFailed, startState: store.Started, wantErr: store.ErrTerminal},
		{name: "cancelled", status: vocab.ScanCancelled, startState: store.Started, wantErr: store.ErrTerminal},
		{name: "foreign", status: vocab.ScanPending, startState: store.Started, otherOrg: true, wantErr: store.ErrNotFound},
		{name: "start not finished", status: vocab.ScanPending, startState: store.Starting, wantErr: store.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := storetest.Insert(t, st, storetest.Scan(org), tc.status, tc.startState)
			orgID := org
			if tc.otherOrg {
				orgID = uuid.NewString()
			}
			sc, prev, err := cancel(orgID, id)
			got, gerr := st.ByID(ctx, id)
			require.NoError(t, gerr)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Equal(t, tc.status, got.Status, "a refused cancel changes nothing")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.status, prev)
			require.Equal(t, vocab.ScanCancelled, sc.Status)
			require.NotNil(t, got.CompletedAt)
			running, err := st.StartRunning(ctx, id, orgID, 0)
			require.ErrorIs(t, err, store.ErrNotRunnable, "a cancelled scan never starts")
			require.False(t, running)
			require.NoError(t, st.Complete(ctx, id))
			_, err = st.Fail(ctx, id, "x")
			require.NoError(t, err)
			got, err = st.ByID(ctx, id)
			require.NoError(t, err)
			require.Equal(t, vocab.ScanCancelled, got.Status, "a worker finishing late does not overwrite the cancellation")
		})
	}
}
