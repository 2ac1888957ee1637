package webhook_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/services/findings/internal/outbox"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
	"github.com/vulnscan/vulnscan/services/findings/internal/webhook"
)

// TestSign checks the Standard Webhooks reference vector.
func TestSign(t *testing.T) {
	t.Parallel()
	sig, err := webhook.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", []byte(`{"test": 2432232314}`))
	require.NoError(t, err)
	require.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", sig)
	_, err = webhook.Sign("whsec_!!!", "id", "1", nil)
	require.Error(t, err)
	s, err := webhook.NewSecret()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(s, "whsec_"))
	require.Len(t, s, len("whsec_")+32)
}

// TestDeliveryChecksAddressAtConnect: a webhook whose host stopped being
// public (DNS rebinding) is refused when delivering, not only at
// registration; with the address exempted the same delivery goes through.
func TestDeliveryChecksAddressAtConnect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.Migrated(t, "findings_webhook", store.Migrate)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	box, err := secretbox.New(key)
	require.NoError(t, err)
	var hits atomic.Int32
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(recv.Close)

	st := &webhook.Store{Pool: pool}
	org := uuid.NewString()
	w := webhook.Webhook{ID: uuid.NewString(), OrgID: org, URL: recv.URL, Events: []string{webhook.ScanCompleted}}
	secret, err := webhook.NewSecret()
	require.NoError(t, err)
	w.URLEnc, err = box.Seal([]byte(recv.URL), webhook.URLAD(w.ID))
	require.NoError(t, err)
	w.SecretEnc, err = box.Seal([]byte(secret), webhook.SecretAD(w.ID))
	require.NoError(t, err)
	_, err = st.Create(ctx, w, 5)
	require.NoError(t, err)
	n, err := st.Publish(ctx, uuid.NewString(), org, webhook.ScanCompleted, time.Now(), map[string]any{"scan": map[string]any{"id": "x"}})
	require.NoError(t, err)
	require.Equal(t, 1, n)

	run := func(allowed []string, until func(webhook.Delivery) bool) webhook.Delivery {
		g, err := netguard.New(allowed)
		require.NoError(t, err)
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- (&webhook.Worker{Store: st, Box: box, Client: g.Client(5*time.Second, 0), Log: logging.New(testWriter{t}, "test"),
				Schedule: outbox.Schedule{Poll: 50 * time.Millisecond, BaseBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxAttempts: 100, Batch: 10}}).Run(wctx)
		}()
		defer func() { cancel(); require.NoError(t, <-done) }()
		var d webhook.Delivery
		require.Eventually(t, func() bool {
			ds, _, err := st.Deliveries(ctx, w.ID, 10, 0)
			require.NoError(t, err)
			require.Len(t, ds, 1)
			d = ds[0]
			return until(d)
		}, time.Minute, 20*time.Millisecond)
		return d
	}
	d := run(nil, func(d webhook.Delivery) bool { return d.LastError != nil })
	require.Contains(t, *d.LastError, "not public")
	require.Nil(t, d.LastStatusCode)
	require.Equal(t, "pending", d.Status)
	require.Zero(t, hits.Load(), "nothing reached the loopback receiver")

	d = run([]string{"127.0.0.0/8"}, func(d webhook.Delivery) bool { return d.Status == "delivered" })
	require.EqualValues(t, 200, *d.LastStatusCode)
	require.EqualValues(t, 1, hits.Load())
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
