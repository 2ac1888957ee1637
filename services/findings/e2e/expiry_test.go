package e2e

import (
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/services/findings/internal/expiry"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// TestRiskAcceptanceExpiry: an acceptance with expires_at reopens the
// finding on its own once the worker's clock passes it, as the agent, with
// an audit record, a thread entry and an integration event; one without
// an end stays accepted.
func TestRiskAcceptanceExpiry(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	scanID := newScan(t, o, "https://github.example.com/acme/expiry.git")
	got := report(t, scanID, fnd("e1", "high"), fnd("e2", "low"), fnd("e3", "low"))
	expiring, forever, bulk := got[0], got[1], got[2]
	chat := newReceiver(t, 0, nil)
	addIntegration(t, nil, "--org", o.ID, "--kind", "slack", "--url", chat.URL+"/hook")

	// The expiry must be a future instant and goes only with accepted_risk.
	soon := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	for _, tc := range []struct {
		name string
		body map[string]any
		msg  string
	}{
		{"past", map[string]any{"state": "accepted_risk", "expires_at": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)}, "expires_at must be in the future"},
		{"other state", map[string]any{"state": "true_positive", "expires_at": soon.Format(time.RFC3339)}, "expires_at requires state accepted_risk"},
		{"no state", map[string]any{"severity": "low", "expires_at": soon.Format(time.RFC3339)}, "expires_at requires state accepted_risk"},
		{"not a time", map[string]any{"state": "accepted_risk", "expires_at": "next week"}, "expires_at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, do(t, "PATCH", "/findings/"+expiring, o.WriteKey, tc.body), 400, tc.msg)
		})
	}

	r := do(t, "PATCH", "/findings/"+expiring, o.WriteKey, map[string]any{"state": "accepted_risk", "expires_at": soon.Format(time.RFC3339), "reason": "until the vendor patch"})
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.Len(t, r.JSON(), 4, "the PATCH answer keeps the spec's four fields")
	require.Equal(t, soon.Format(time.RFC3339), get(t, o.ReadKey, expiring)["risk_expires_at"])
	r = do(t, "PATCH", "/findings/"+forever, o.WriteKey, map[string]any{"state": "accepted_risk"})
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.Nil(t, get(t, o.ReadKey, forever)["risk_expires_at"])
	r = do(t, "POST", "/findings/bulk", o.WriteKey, map[string]any{"ids": []string{bulk}, "state": "accepted_risk", "expires_at": soon.Add(time.Minute).Format(time.RFC3339)})
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.Eventually(t, func() bool { return len(chat.got()) == 3 }, 30*time.Second, 50*time.Millisecond)

	// The worker's clock decides; before the end nothing moves.
	now := time.Now()
	w := &expiry.Worker{Store: &store.Store{Pool: pool}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Batch: 1,
		Now: func() time.Time { return now }}
	_, err := w.Once(ctx(t))
	require.NoError(t, err)
	require.Equal(t, "accepted_risk", get(t, o.ReadKey, expiring)["state"])

	now = soon.Add(30 * time.Second)
	_, err = w.Once(ctx(t))
	require.NoError(t, err)
	f := get(t, o.ReadKey, expiring)
	require.Equal(t, "open", f["state"], "the acceptance ended")
	require.Nil(t, f["risk_expires_at"])
	require.Equal(t, "accepted_risk", get(t, o.ReadKey, forever)["state"], "an acceptance without an end stays")
	require.Equal(t, "accepted_risk", get(t, o.ReadKey, bulk)["state"], "its end has not come yet")
	thread := f["triage_thread"].([]any)
	last := thread[len(thread)-1].(map[string]any)
	require.Equal(t, "agent", last["source"])
	require.Equal(t, "open", last["reaction"])
	require.Contains(t, last["comment"], "Risk acceptance expired at "+soon.Format(time.RFC3339))

	h := do(t, "GET", "/findings/"+expiring+"/history?limit=100", o.ReadKey, nil)
	require.Equal(t, 200, h.Status, "%s", h.Body)
	data := h.JSON()["data"].([]any)
	fields := map[string]map[string]any{}
	for _, d := range data[len(data)-2:] {
		e := d.(map[string]any)
		fields[e["field"].(string)] = e
	}
	require.Equal(t, "accepted_risk", fields["state"]["from"])
	require.Equal(t, "open", fields["state"]["to"])
	require.Equal(t, "agent", fields["state"]["source"])
	require.Equal(t, "agent", fields["state"]["actor"].(map[string]any)["type"])
	require.Nil(t, fields["risk_expires_at"]["to"])

	// Propagation: the integration hears of the reopening.
	require.Eventually(t, func() bool { return len(chat.got()) == 4 }, 30*time.Second, 50*time.Millisecond)
	var payload map[string]any
	require.NoError(t, json.Unmarshal(chat.got()[3].Body, &payload))
	evm := payload["event"].(map[string]any)
	require.Equal(t, expiring, evm["finding"].(map[string]any)["id"])
	require.Equal(t, "open", evm["finding"].(map[string]any)["state"])
	require.Equal(t, "agent", evm["actor"].(map[string]any)["source"])

	// Later, the bulk acceptance ends too; a second run finds nothing more.
	now = soon.Add(2 * time.Minute)
	_, err = w.Once(ctx(t))
	require.NoError(t, err)
	require.Equal(t, "open", get(t, o.ReadKey, bulk)["state"])
	require.Equal(t, "accepted_risk", get(t, o.ReadKey, forever)["state"])
}
