package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/services/scan/internal/store"
	"github.com/vulnscan/vulnscan/services/scan/internal/store/storetest"
)

// TestDocumentQuota: an organization's context documents are bounded in
// number and total size, also under concurrent creation.
func TestDocumentQuota(t *testing.T) {
	t.Parallel()
	st := storetest.New(t, key)
	ctx := context.Background()
	org := uuid.NewString()
	q := store.DocumentQuota{MaxCount: 3, MaxSize: 100}
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			_, err := st.CreateDocument(ctx, store.Document{ID: uuid.NewString(), OrgID: org, Name: "d", Content: "exclude: x", Size: 10}, q)
			errs <- err
		}()
	}
	var ok int
	for i := 0; i < 8; i++ {
		err := <-errs
		if err == nil {
			ok++
			continue
		}
		require.True(t, errors.Is(err, store.ErrQuota), err)
		require.ErrorContains(t, err, "already has 3 context documents")
	}
	require.Equal(t, 3, ok)
	_, err := st.CreateDocument(ctx, store.Document{ID: uuid.NewString(), OrgID: uuid.NewString(), Name: "big", Content: strings.Repeat("x", 101), Size: 101}, q)
	require.ErrorIs(t, err, store.ErrQuota)
	require.ErrorContains(t, err, "more than the 100 allowed")
}

// TestStartRunningPerOrg: at most limit scans of an organization run at
// once; the same scan again (a retried attempt) is not counted against
// itself; other organizations are not held back.
func TestStartRunningPerOrg(t *testing.T) {
	t.Parallel()
	st := storetest.New(t, key)
	ctx := context.Background()
	org := uuid.NewString()
	mk := func(orgID string) string {
		id := uuid.NewString()
		_, err := st.Pool.Exec(ctx, `INSERT INTO scan.scans (id, org_id, user_id, task_id, start_state, cost_estimation_id, repos, credits)
			VALUES ($1, $2, $3, 't', 'started', $4, '[]', 1)`, id, orgID, uuid.NewString(), uuid.NewString())
		require.NoError(t, err)
		return id
	}
	a, b, other := mk(org), mk(org), mk(uuid.NewString())
	for _, tc := range []struct {
		id, org string
		want    bool
	}{{a, org, true}, {b, org, false}, {a, org, true}, {other, "", true}} {
		o := tc.org
		if o == "" {
			require.NoError(t, st.Pool.QueryRow(ctx, `SELECT org_id::text FROM scan.scans WHERE id = $1`, tc.id).Scan(&o))
		}
		ok, err := st.StartRunning(ctx, tc.id, o, 1)
		require.NoError(t, err)
		require.Equal(t, tc.want, ok)
	}
	var status string
	require.NoError(t, st.Pool.QueryRow(ctx, `SELECT status FROM scan.scans WHERE id = $1`, b).Scan(&status))
	require.Equal(t, "pending", status)
	require.NoError(t, st.Complete(ctx, a))
	ok, err := st.StartRunning(ctx, b, org, 1)
	require.NoError(t, err)
	require.True(t, ok, "a finished scan frees its slot")
}
