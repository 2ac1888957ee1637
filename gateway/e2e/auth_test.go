package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/systest"
)

// flipLast changes a key's last character, so its checksum no longer holds
// (replacing it with a fixed letter would leave it valid when it already
// was that letter).
func flipLast(key string) string {
	last := "x"
	if strings.HasSuffix(key, "x") {
		last = "y"
	}
	return key[:len(key)-1] + last
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 10)
	expiring, err := sys.Ctl("key", "create", "--org", org.ID, "--scopes", "read", "--expires-in", "1s")
	require.NoError(t, err)
	require.NotNil(t, expiring["expires_at"])
	revoked, err := sys.Ctl("key", "create", "--org", org.ID, "--scopes", "read,write")
	require.NoError(t, err)
	_, err = sys.Ctl("key", "revoke", "--id", revoked["id"].(string))
	require.NoError(t, err)
	time.Sleep(1100 * time.Millisecond)

	tests := []struct {
		name   string
		key    string
		hdr    []string
		status int
		msg    string
	}{
		{"no key", "", nil, 401, "X-Api-Key"},
		{"bearer session token", "", []string{"Authorization", "Bearer eyJhbGciOi.session.token"}, 401, "This endpoint requires API key authentication in the X-Api-Key header"},
		{"session cookie", "", []string{"Cookie", "session=abc123"}, 401, "This endpoint requires API key authentication in the X-Api-Key header"},
		{"malformed", "not-a-key", []string{"Accept", "application/json"}, 401, "malformed"},
		{"bad checksum", flipLast(org.ReadKey), []string{"Accept", "application/json"}, 401, "malformed"},
		{"unknown", mustUnknownKey(t), []string{"Accept", "application/json"}, 401, "invalid"},
		{"revoked", revoked["key"].(string), []string{"Accept", "application/json"}, 401, "revoked"},
		{"expired", expiring["key"].(string), []string{"Accept", "application/json"}, 401, "expired"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, "GET", "/credits", tc.key, nil, append([]string{"X-Test", "1"}, tc.hdr...)...)
			systest.RequireError(t, r, tc.status, tc.msg)
		})
	}

	t.Run("read key on write endpoints", func(t *testing.T) {
		for _, ep := range []struct{ method, path string }{
			{"POST", "/api-keys"}, {"DELETE", "/api-keys/" + org.WriteKeyID}, {"POST", "/cost-estimations"}, {"POST", "/scans"},
		} {
			r := do(t, ep.method, ep.path, org.ReadKey, map[string]any{})
			systest.RequireError(t, r, 403, "missing required scope")
			require.Contains(t, string(r.Body), "write")
		}
	})
	t.Run("read key reads", func(t *testing.T) {
		r := do(t, "GET", "/credits", org.ReadKey, nil)
		require.Equal(t, 200, r.Status, string(r.Body))
		require.EqualValues(t, 10, r.JSON()["balance"])
	})
}

// mustUnknownKey returns a well-formed key that was never issued.
func mustUnknownKey(t *testing.T) string {
	t.Helper()
	k, _, _, err := apikey.Generate()
	require.NoError(t, err)
	return k
}
