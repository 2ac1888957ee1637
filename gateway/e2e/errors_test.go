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

// TestHeadIsGetWithoutBody: HEAD on any API route answers what GET answers,
// status and headers, without the body; it needs a key like GET.
func TestHeadIsGetWithoutBody(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 0)
	for _, path := range []string{"/credits", "/findings?severity=high", "/scans", "/api-keys"} {
		get := do(t, "GET", path, org.ReadKey, nil)
		head := do(t, "HEAD", path, org.ReadKey, nil)
		require.Equal(t, 200, get.Status, "GET %s: %s", path, get.Body)
		require.Equal(t, get.Status, head.Status, "HEAD %s", path)
		require.Equal(t, get.Header.Get("Content-Type"), head.Header.Get("Content-Type"), "HEAD %s", path)
		require.Empty(t, head.Body, "HEAD %s", path)
	}
	require.Equal(t, 401, do(t, "HEAD", "/findings", "", nil).Status)
	require.Equal(t, 404, do(t, "HEAD", "/findings/00000000-0000-4000-8000-000000000001", org.ReadKey, nil).Status)
	require.Equal(t, 404, do(t, "HEAD", "/no-such-thing", org.ReadKey, nil).Status)
}
