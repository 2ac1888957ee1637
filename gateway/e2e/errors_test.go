package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

func TestGatewayErrors(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 0)
	systest.RequireError(t, do(t, "GET", "/no-such-thing", org.ReadKey, nil), 404, "cannot get")
	systest.RequireError(t, do(t, "PUT", "/credits", org.WriteKey, "{}"), 405, "not allowed")
	systest.RequireError(t, do(t, "POST", "/api-keys", org.WriteKey, "{not json"), 400, "malformed")
	systest.RequireError(t, do(t, "POST", "/api-keys", org.WriteKey, `{"name":"x","scopes":["read"],"surprise":1}`), 400, "surprise")
	big := `{"name":"` + strings.Repeat("a", 3<<20) + `"}`
	systest.RequireError(t, do(t, "POST", "/api-keys", org.WriteKey, big), 413, "too large")
	r := do(t, "GET", "/credits", org.ReadKey, nil)
	require.NotEmpty(t, r.Header.Get("X-Request-Id"))
	for k := range r.Header {
		require.False(t, strings.HasPrefix(strings.ToLower(k), "grpc-"), "leaked header %s", k)
	}
}
