package expiry_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/services/findings/internal/expiry"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// TestOnce: the worker reopens, by its own clock, every acceptance that
// has ended, in batches of Batch, and leaves the others; a second round
// finds nothing.
func TestOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := &store.Store{Pool: dbtest.Migrated(t, "findings_expiry", store.Migrate)}
	org := uuid.NewString()
	sc := store.Scan{ID: uuid.NewString(), OrgID: org, RepoURL: "https://git.example.com/acme/app", ScanType: "full"}
	_, err := s.RegisterScan(ctx, sc)
	require.NoError(t, err)
	var batch []store.Reported
	for _, fp := range []string{"a", "b", "c", "d", "e"} {
		batch = append(batch, store.Reported{Fingerprint: fp, Title: "t " + fp, Category: "injection", Severity: "high", Verified: true})
	}
	res, err := s.Report(ctx, sc, batch, true)
	require.NoError(t, err)
	now := time.Now().UTC()
	accepted := "accepted_risk"
	actor := store.Actor{UserID: uuid.NewString(), Username: "ana", Source: "api"}
	for i, r := range res {
		end := now.Add(time.Duration(i+1) * time.Hour) // a: +1h … e: +5h
		_, err := s.Apply(ctx, org, r.FindingID, store.Update{State: &accepted, ExpiresAt: &end}, actor)
		require.NoError(t, err)
	}

	w := &expiry.Worker{Store: s, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Every: time.Hour, Batch: 2,
		Now: func() time.Time { return now.Add(3*time.Hour + time.Minute) }}
	n, err := w.Once(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n, "the three ended by the worker's clock, over two batches")
	n, err = w.Once(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	for i, r := range res {
		d, err := s.Get(ctx, org, r.FindingID)
		require.NoError(t, err)
		if i < 3 {
			require.Equal(t, "open", d.State, r.Fingerprint)
			require.Nil(t, d.RiskExpiresAt)
		} else {
			require.Equal(t, "accepted_risk", d.State, r.Fingerprint)
			require.NotNil(t, d.RiskExpiresAt)
		}
	}
}
