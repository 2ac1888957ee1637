package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

func TestCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	require.NoError(t, store.Migrate(ctx, pool))
	st := &store.Store{Pool: pool}
	org := uuid.NewString()

	insert := func(t *testing.T, status, startState string) string {
		t.Helper()
		sc := store.Scan{ID: uuid.NewString(), OrgID: org, UserID: uuid.NewString(), TaskID: "t", EstimationID: uuid.NewString(),
			Repos: []store.Repo{{URL: "upload://x"}}, TargetURLs: []string{}, ContextDocumentIDs: []string{}, Credits: 7}
		require.NoError(t, db.InTx(ctx, pool, func(tx pgx.Tx) error { return st.InsertStarting(ctx, tx, sc) }))
		_, err := pool.Exec(ctx, `UPDATE scan.scans SET status = $2, start_state = $3 WHERE id = $1`, sc.ID, status, startState)
		require.NoError(t, err)
		return sc.ID
	}
	cancel := func(orgID, id string) (store.Scan, string, error) {
		var sc store.Scan
		var prev string
		err := db.InTx(ctx, pool, func(tx pgx.Tx) error {
			var err error
			sc, prev, err = st.Cancel(ctx, tx, orgID, id)
			return err
		})
		return sc, prev, err
	}

	tests := []struct {
		name, status, startState string
		otherOrg                 bool
		wantErr                  error
	}{
		{name: "pending", status: "pending", startState: "started"},
		{name: "running", status: "running", startState: "started"},
		{name: "completed", status: "completed", startState: "started", wantErr: store.ErrTerminal},
		{name: "failed", status: "failed", startState: "started", wantErr: store.ErrTerminal},
		{name: "cancelled", status: "cancelled", startState: "started", wantErr: store.ErrTerminal},
		{name: "foreign", status: "pending", startState: "started", otherOrg: true, wantErr: store.ErrNotFound},
		{name: "start not finished", status: "pending", startState: "starting", wantErr: store.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := insert(t, tc.status, tc.startState)
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
			require.Equal(t, "cancelled", sc.Status)
			require.NotNil(t, got.CompletedAt)
			running, err := st.StartRunning(ctx, id, orgID, 0)
			require.ErrorIs(t, err, store.ErrNotRunnable, "a cancelled scan never starts")
			require.False(t, running)
			require.NoError(t, st.Complete(ctx, id))
			_, err = st.Fail(ctx, id, "x")
			require.NoError(t, err)
			got, err = st.ByID(ctx, id)
			require.NoError(t, err)
			require.Equal(t, "cancelled", got.Status, "a worker finishing late does not overwrite the cancellation")
		})
	}
}
