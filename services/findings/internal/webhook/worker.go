package webhook

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/vulnscan/vulnscan/pkg/redact"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/services/findings/internal/outbox"
)

// Worker delivers due webhook deliveries until its context ends.
type Worker struct {
	outbox.Schedule
	Store *Store
	Box   *secretbox.Box
	// Client must refuse non-public addresses on every connection
	// (netguard) and follow no redirects.
	Client *http.Client
	Log    *slog.Logger
	// Now is the clock of the webhook-timestamp header.
	Now func() time.Time
}

// Run polls for due deliveries and sends them, a batch at a time, through
// the shared outbox loop.
func (w *Worker) Run(ctx context.Context) error {
	return (&outbox.Worker[due]{Schedule: w.Schedule, Log: w.Log, Name: "webhook delivery",
		Claim: w.Store.claim, Deliver: w.deliver}).Run(ctx)
}

func (w *Worker) deliver(ctx context.Context, d due) {
	code, err := w.send(ctx, d)
	if err == nil {
		if err := w.Store.attempted(ctx, d.ID, true, code, "", 0, false); err != nil {
			w.Log.ErrorContext(ctx, "mark webhook delivery delivered", "delivery", d.ID, "error", err)
		}
		return
	}
	backoff, final := w.Retry(d.Attempts)
	w.Log.WarnContext(ctx, "webhook delivery failed", "delivery", d.ID, "webhook", d.Webhook.ID, "event", d.EventID, "attempt", d.Attempts,
		"final", final, "status_code", code, "error", err.Error())
	if err := w.Store.attempted(ctx, d.ID, false, code, err.Error(), backoff, final); err != nil {
		w.Log.ErrorContext(ctx, "mark webhook delivery failed", "delivery", d.ID, "error", err)
	}
}

// send makes one attempt; it returns the receiver's status code (0 when
// none) and an error, free of the URL's secrets, unless the answer was 2xx.
func (w *Worker) send(ctx context.Context, d due) (int, error) {
	target, _, err := w.Box.Open(d.Webhook.URLEnc, URLAD(d.Webhook.ID))
	if err != nil {
		return 0, fmt.Errorf("open webhook url: %w", err)
	}
	secret, _, err := w.Box.Open(d.Webhook.SecretEnc, SecretAD(d.Webhook.ID))
	if err != nil {
		return 0, fmt.Errorf("open webhook secret: %w", err)
	}
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	ts := strconv.FormatInt(now().Unix(), 10)
	sig, err := Sign(string(secret), d.EventID, ts, d.Payload)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, string(target), bytes.NewReader(d.Payload))
	if err != nil {
		return 0, fmt.Errorf("build request: %s", redact.Error(err, redact.URL, string(target)))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "vulnscan-webhooks/1")
	req.Header.Set("webhook-id", d.EventID)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", sig)
	resp, err := w.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s", redact.Error(err, redact.URL, string(target)))
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("receiver answered %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}
