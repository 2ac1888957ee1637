package delivery_test

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/services/findings/internal/delivery"
	"github.com/vulnscan/vulnscan/services/findings/internal/outbox"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
	"github.com/vulnscan/vulnscan/services/findings/internal/store/storetest"
)

// hit is one request the chat receiver got.
type hit struct {
	delivery, timestamp, signature string
	body                           []byte
}

// TestWorkerRetriesThenDelivers: through the shared outbox loop a failed
// attempt stays pending with its error and is retried with the same
// delivery id and a valid signature; once delivered nothing is sent again;
// an event out of attempts is dead-lettered.
func TestWorkerRetriesThenDelivers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t, "findings_delivery")
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	box, err := secretbox.New(key)
	require.NoError(t, err)

	var mu sync.Mutex
	var hits []hit
	answers := []int{http.StatusInternalServerError, http.StatusOK}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		hits = append(hits, hit{r.Header.Get("X-Vulnscan-Delivery"), r.Header.Get("X-Vulnscan-Timestamp"), r.Header.Get("X-Vulnscan-Signature"), body})
		code := http.StatusInternalServerError
		if len(answers) > 0 {
			code, answers = answers[0], answers[1:]
		}
		mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(recv.Close)

	org := uuid.NewString()
	integ := store.Integration{ID: uuid.NewString(), OrgID: org, Kind: delivery.WebhookKind, Name: "chat", URL: "https://chat.example.com/REDACTED"}
	integ.URLEnc, err = box.Seal([]byte(recv.URL+"/hook"), store.IntegrationURLAD(integ.ID))
	require.NoError(t, err)
	integ.SecretEnc, err = box.Seal([]byte("chat-signing-secret"), store.IntegrationSecretAD(integ.ID))
	require.NoError(t, err)
	_, err = s.AddIntegration(ctx, integ)
	require.NoError(t, err)
	ids := storetest.Report(t, s, storetest.Scan(t, s, org, "https://git.example.com/acme/app"),
		store.Reported{Fingerprint: "a", Title: "SQL injection", Category: "injection", Severity: "high"})
	resolved := "resolved"
	_, err = s.Apply(ctx, org, ids[0], store.Update{State: &resolved}, store.Actor{UserID: uuid.NewString(), Username: "ana", Source: "api"})
	require.NoError(t, err)

	w := &delivery.Worker{Store: s, Box: box, Client: recv.Client(), Log: slog.New(slog.DiscardHandler),
		Schedule: outbox.Schedule{Batch: 10, MaxAttempts: 2}} // no backoff: a failed event is due at once
	status := func() (string, int, string) {
		var st, last string
		var attempts int
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT status, attempts, coalesce(last_error, '') FROM findings.outbox WHERE org_id = $1`, org).
			Scan(&st, &attempts, &last))
		return st, attempts, last
	}
	_, err = w.Once(ctx)
	require.NoError(t, err)
	st, attempts, last := status()
	require.Equal(t, "pending", st)
	require.Equal(t, 1, attempts)
	require.Equal(t, "receiver answered 500", last)

	_, err = w.Once(ctx)
	require.NoError(t, err)
	st, attempts, last = status()
	require.Equal(t, "delivered", st)
	require.Equal(t, 2, attempts)
	require.Empty(t, last)
	_, err = w.Once(ctx)
	require.NoError(t, err)

	require.Len(t, hits, 2, "one retry, nothing after delivery")
	require.Equal(t, hits[0].delivery, hits[1].delivery, "a stable id to drop repeats by")
	require.Equal(t, hits[0].body, hits[1].body)
	for _, h := range hits {
		require.Equal(t, "sha256="+delivery.Sign("chat-signing-secret", h.timestamp, h.body), h.signature)
	}

	// Out of attempts: the next event fails twice and is dead.
	_, err = s.AddComment(ctx, org, ids[0], "regression test added", store.Actor{UserID: uuid.NewString(), Username: "ana", Source: "api"})
	require.NoError(t, err)
	for range 3 {
		_, err = w.Once(ctx)
		require.NoError(t, err)
	}
	var dead int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM findings.outbox WHERE org_id = $1 AND status = 'dead' AND attempts = 2
		AND last_error = 'receiver answered 500'`, org).Scan(&dead))
	require.Equal(t, 1, dead)
	require.Len(t, hits, 4, "two attempts, then none")
}
