package expiry_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/services/findings/internal/expiry"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
	"github.com/vulnscan/vulnscan/services/findings/internal/store/storetest"
)

// TestOnce: the worker reopens, by its own clock, every acceptance that
// has ended, in batches of Batch, and leaves the others; a second round
// finds nothing.
func TestOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t, "findings_expiry")
	org := uuid.NewString()
	var fs []store.Reported
	for _, fp := range []string{"a", "b", "c", "d", "e"} {
		fs = append(fs, store.Reported{Fingerprint: fp, Title: "t " + fp, Category: "injection", Severity: "high"})
	}
	ids := storetest.Report(t, s, storetest.Scan(t, s, org, "https://git.example.com/acme/app"), fs...)
	now := time.Now().UTC()
	accepted := "accepted_risk"
	actor := store.Actor{UserID: uuid.NewString(), Username: "ana", Source: "api"}
	for i, id := range ids {
		end := now.Add(time.Duration(i+1) * time.Hour) // a: +1h … e: +5h
		_, err := s.Apply(ctx, org, id, store.Update{State: &accepted, ExpiresAt: &end}, actor)
		require.NoError(t, err)
	}

	w := &expiry.Worker{Store: s, Log: slog.New(slog.DiscardHandler), Batch: 2,
		Now: func() time.Time { return now.Add(3*time.Hour + time.Minute) }}
	n, err := w.Once(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n, "the three ended by the worker's clock, over two batches")
	n, err = w.Once(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	for i, id := range ids {
		d, err := s.Get(ctx, org, id)
		require.NoError(t, err)
		if i < 3 {
			require.Equal(t, "open", d.State, i)
			require.Nil(t, d.RiskExpiresAt)
		} else {
			require.Equal(t, "accepted_risk", d.State, i)
			require.NotNil(t, d.RiskExpiresAt)
		}
	}
}
