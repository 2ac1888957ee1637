package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

func TestRateLimitPerKey(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 0)
	var limited systest.Response
	for i := 0; i < 200 && limited.Status == 0; i++ {
		r := do(t, "GET", "/credits", org.ReadKey, nil)
		require.NotEmpty(t, r.Header.Get("X-RateLimit-Limit"))
		require.NotEmpty(t, r.Header.Get("X-RateLimit-Remaining"))
		if r.Status == 429 {
			limited = r
		}
	}
	systest.RequireError(t, limited, 429, "rate limit")
	require.NotEmpty(t, limited.Header.Get("Retry-After"))
	require.Equal(t, "0", limited.Header.Get("X-RateLimit-Remaining"))
	// Another key of the same organization is unaffected.
	r := do(t, "GET", "/credits", org.WriteKey, nil)
	require.Equal(t, 200, r.Status, string(r.Body))
}
