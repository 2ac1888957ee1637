package systest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"
)

// WebhookMessage is one request a WebhookReceiver got.
type WebhookMessage struct {
	ID, Timestamp, Signature string
	Body                     []byte
	// Answered is the status the receiver answered with.
	Answered int
	Payload  map[string]any
}

// Type is the payload's event type.
func (m WebhookMessage) Type() string { s, _ := m.Payload["type"].(string); return s }

// Data is the payload's data object.
func (m WebhookMessage) Data() map[string]any { d, _ := m.Payload["data"].(map[string]any); return d }

// Verify checks the message's Standard Webhooks signature under secret
// (whsec_<base64 key>), independently of the service's own code.
func (m WebhookMessage) Verify(secret string) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(m.ID + "." + m.Timestamp + "." + string(m.Body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, s := range strings.Fields(m.Signature) { // several signatures may be given
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}

// WebhookReceiver is a loopback HTTP endpoint that records every request
// and can be told to answer 500 to the next ones.
type WebhookReceiver struct {
	*Recorder
}

// NewWebhookReceiver starts a receiver on 127.0.0.1, closed with the test.
func NewWebhookReceiver(t testing.TB) *WebhookReceiver {
	return &WebhookReceiver{NewRecorder(t, nil)}
}

// FailNext makes the receiver answer 500 to the next n requests.
func (r *WebhookReceiver) FailNext(n int) { r.Recorder.FailNext(n, http.StatusInternalServerError) }

// Messages returns what the receiver got so far, in arrival order.
func (r *WebhookReceiver) Messages() []WebhookMessage {
	calls := r.Calls()
	out := make([]WebhookMessage, 0, len(calls))
	for _, c := range calls {
		m := WebhookMessage{ID: c.Header.Get("webhook-id"), Timestamp: c.Header.Get("webhook-timestamp"),
			Signature: c.Header.Get("webhook-signature"), Body: c.Body, Answered: c.Status, Payload: c.JSON()}
		out = append(out, m)
	}
	return out
}

// Matching returns the messages for which ok holds.
func (r *WebhookReceiver) Matching(ok func(WebhookMessage) bool) []WebhookMessage {
	var out []WebhookMessage
	for _, m := range r.Messages() {
		if ok(m) {
			out = append(out, m)
		}
	}
	return out
}

// WaitFor polls until at least n messages match ok, or fails the test
// after timeout.
func (r *WebhookReceiver) WaitFor(t testing.TB, n int, timeout time.Duration, what string, ok func(WebhookMessage) bool) []WebhookMessage {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := r.Matching(ok)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook receiver: %d of %d messages %s after %s; got %d messages in all", len(got), n, what, timeout, len(r.Messages()))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// OfType matches messages of the event type typ.
func OfType(typ string) func(WebhookMessage) bool {
	return func(m WebhookMessage) bool { return m.Type() == typ }
}
