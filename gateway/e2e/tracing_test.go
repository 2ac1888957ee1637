package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTracePropagation: one request's trace id appears in the gateway's
// access log and in the auth service's RPC log: the W3C trace context
// travels from the gateway over gRPC, under the gateway's request id.
func TestTracePropagation(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 0)
	r := do(t, "GET", "/credits", org.ReadKey, nil)
	require.Equal(t, 200, r.Status)
	rid := r.Header.Get("X-Request-Id")
	require.NotEmpty(t, rid)
	var gw, auth map[string]any
	require.Eventually(t, func() bool {
		gw, auth = logRecord("[gateway] ", "http", rid), logRecord("[auth] ", "rpc", rid)
		return gw["trace_id"] != nil && auth["trace_id"] != nil
	}, 5*time.Second, 50*time.Millisecond, "both processes log the request with a trace id")
	require.Len(t, gw["trace_id"], 32)
	require.Equal(t, gw["trace_id"], auth["trace_id"])
}

// logRecord finds the JSON log record of a process with this message and
// request id.
func logRecord(prefix, msg, rid string) map[string]any {
	for _, line := range strings.Split(sys.Log.String(), "\n") {
		if !strings.HasPrefix(line, prefix) || !strings.Contains(line, rid) {
			continue
		}
		var rec map[string]any
		if json.Unmarshal([]byte(strings.TrimPrefix(line, prefix)), &rec) == nil && rec["msg"] == msg && rec["request_id"] == rid {
			return rec
		}
	}
	return nil
}

// TestInboundTraceContextIsNotTrusted: a client's traceparent, tracestate,
// baggage and X-Request-Id are not adopted. The gateway answers with its own
// request id, starts a new trace (the services log the gateway's trace, not
// the client's), and logs the client's id only as a separate, sanitized,
// length-limited field.
func TestInboundTraceContextIsNotTrusted(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 0)
	const forgedTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	forgedID := "forged-id<script>" + strings.Repeat("x", 100)
	r := do(t, "GET", "/credits", org.ReadKey, nil,
		"Traceparent", "00-"+forgedTrace+"-00f067aa0ba902b7-01",
		"Tracestate", "vendor=forced",
		"Baggage", "tenant=victim",
		"X-Request-Id", forgedID)
	require.Equal(t, 200, r.Status)
	rid := r.Header.Get("X-Request-Id")
	require.NotEmpty(t, rid)
	require.NotEqual(t, forgedID, rid)
	require.NotContains(t, rid, "forged")

	var gw, auth map[string]any
	require.Eventually(t, func() bool {
		gw, auth = logRecord("[gateway] ", "http", rid), logRecord("[auth] ", "rpc", rid)
		return gw["trace_id"] != nil && auth["trace_id"] != nil
	}, 5*time.Second, 50*time.Millisecond)
	require.NotEqual(t, forgedTrace, gw["trace_id"])
	require.Equal(t, gw["trace_id"], auth["trace_id"], "the services follow the gateway's trace")
	client, _ := gw["client_request_id"].(string)
	require.True(t, strings.HasPrefix(client, "forged-idscriptx"), "client id kept, sanitized: %q", client)
	require.Len(t, client, 64)
	logged := sys.SettledLog()
	require.NotContains(t, logged, forgedTrace)
	require.NotContains(t, logged, "tenant=victim")
}
