package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestVulnscanctl(t *testing.T) {
	t.Parallel()
	o, err := sys.Ctl("org", "create", "--name", fmt.Sprint("ctl-", time.Now().UnixNano()), "--verification", "manual")
	require.NoError(t, err)
	orgID := o["org_id"].(string)
	u, err := sys.Ctl("user", "create", "--org", orgID, "--username", "alice")
	require.NoError(t, err)
	k, err := sys.Ctl("key", "create", "--org", orgID, "--user", u["user_id"].(string), "--scopes", "read", "--name", "alice-ro", "--expires-in", "30d")
	require.NoError(t, err)
	require.Equal(t, []any{"read"}, k["scopes"])
	exp, err := time.Parse(time.RFC3339Nano, k["expires_at"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(30*24*time.Hour), exp, time.Minute)
	rv, err := sys.Ctl("key", "revoke", "--id", k["id"].(string))
	require.NoError(t, err)
	require.Equal(t, k["id"], rv["id"])
	require.NotNil(t, rv["revoked_at"])

	// key list shows the revoked key with its time and never a secret.
	kl, err := sys.Ctl("key", "list", "--org", orgID)
	require.NoError(t, err)
	require.EqualValues(t, 1, kl["total"])
	listed := kl["data"].([]any)[0].(map[string]any)
	require.Equal(t, k["id"], listed["id"])
	require.Equal(t, "alice-ro", listed["name"])
	require.NotNil(t, listed["revoked_at"])
	require.NotContains(t, listed, "key")
	// org list includes the new organization with its mode and balance.
	ol, err := sys.Ctl("org", "list")
	require.NoError(t, err)
	found := false
	for _, x := range ol["data"].([]any) {
		if m := x.(map[string]any); m["org_id"] == orgID {
			found = true
			require.Equal(t, "manual", m["verification_mode"])
			require.EqualValues(t, 0, m["balance"])
		}
	}
	require.True(t, found, "org list includes %s", orgID)

	for _, bad := range [][]string{
		{"key", "list", "--org", "not-a-uuid"},
		{"org", "create"},
		{"org", "create", "--name", "x", "--verification", "sometimes"},
		{"user", "create", "--org", orgID, "--username", "alice"},
		{"credits", "show", "--org", "not-a-uuid"},
		{"credits", "grant", "--org", orgID, "--amount", "-3"},
		{"key", "create", "--org", orgID, "--scopes", "admin"},
		{"repo", "connect", "--org", orgID, "--url", "http://insecure.example.com/r.git"},
		{"no", "such"},
	} {
		out, err := sys.CtlRaw(nil, bad...)
		require.Error(t, err, "%v", bad)
		require.Empty(t, out, "%v printed on failure", bad)
	}
}
