package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 0)
	other := sys.Org(t, 0)

	r := do(t, "POST", "/api-keys", org.WriteKey, map[string]any{"name": "ci", "scopes": []string{"read"}})
	require.Equal(t, 201, r.Status, string(r.Body))
	created := r.JSON()
	key := created["key"].(string)
	require.True(t, strings.HasPrefix(key, "vsk_"))
	require.Equal(t, []any{"read"}, created["scopes"])
	require.Nil(t, created["expires_at"])
	require.Equal(t, 200, do(t, "GET", "/credits", key, nil).Status)

	t.Run("validation", func(t *testing.T) {
		for _, tc := range []struct {
			body   any
			status int
			msg    string
		}{
			{map[string]any{"scopes": []string{"read"}}, 400, "name"},
			{map[string]any{"name": "x", "scopes": []string{}}, 400, "scopes"},
			{map[string]any{"name": "x", "scopes": []string{"admin"}}, 400, "scope"},
			{map[string]any{"name": "x", "scopes": []string{"read"}, "expires_at": "2001-01-01T00:00:00Z"}, 400, "expires_at"},
			{map[string]any{"name": "x", "scopes": []string{"read"}, "expires_at": "yesterday"}, 400, "expires_at"},
			{map[string]any{"name": "x", "scopes": []string{"read"}, "owner": "me"}, 400, "owner"},
			{`{"name": "x", "scopes": [`, 400, "malformed"},
		} {
			systest.RequireError(t, do(t, "POST", "/api-keys", org.WriteKey, tc.body), tc.status, tc.msg)
		}
	})

	t.Run("expiry is kept", func(t *testing.T) {
		exp := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
		r := do(t, "POST", "/api-keys", org.WriteKey, map[string]any{"name": "exp", "scopes": []string{"read", "write"}, "expires_at": exp.Format(time.RFC3339)})
		require.Equal(t, 201, r.Status, string(r.Body))
		got, err := time.Parse(time.RFC3339Nano, r.JSON()["expires_at"].(string))
		require.NoError(t, err)
		require.True(t, got.Equal(exp))
	})

	t.Run("list hides secrets", func(t *testing.T) {
		r := do(t, "GET", "/api-keys", org.ReadKey, nil)
		require.Equal(t, 200, r.Status)
		require.NotContains(t, string(r.Body), key)
		require.NotContains(t, string(r.Body), org.WriteKey)
		m := r.JSON()
		data := m["data"].([]any)
		require.EqualValues(t, len(data), m["total"])
		require.GreaterOrEqual(t, len(data), 3)
		for _, d := range data {
			_, hasKey := d.(map[string]any)["key"]
			require.False(t, hasKey)
		}
	})

	t.Run("revocation is immediate and scoped to the org", func(t *testing.T) {
		systest.RequireError(t, do(t, "DELETE", "/api-keys/"+created["id"].(string), other.WriteKey, nil), 404, "not found")
		systest.RequireError(t, do(t, "DELETE", "/api-keys/not-a-uuid", org.WriteKey, nil), 400, "id")
		r := do(t, "DELETE", "/api-keys/"+created["id"].(string), org.WriteKey, nil)
		require.Equal(t, 204, r.Status, string(r.Body))
		require.Empty(t, r.Body)
		systest.RequireError(t, do(t, "GET", "/credits", key, nil), 401, "revoked")
	})
}

func TestActiveKeyLimit(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 0) // holds 2 active keys
	var ids []string
	for i := 0; i < 8; i++ {
		r := do(t, "POST", "/api-keys", org.WriteKey, map[string]any{"name": fmt.Sprint("k", i), "scopes": []string{"read"}})
		require.Equal(t, 201, r.Status, string(r.Body))
		ids = append(ids, r.JSON()["id"].(string))
	}
	systest.RequireError(t, do(t, "POST", "/api-keys", org.WriteKey, map[string]any{"name": "one too many", "scopes": []string{"read"}}), 409, "maximum")
	_, err := sys.Ctl("key", "create", "--org", org.ID, "--scopes", "read")
	require.Error(t, err, "the operator path enforces the same limit")
	require.Equal(t, 204, do(t, "DELETE", "/api-keys/"+ids[0], org.WriteKey, nil).Status)
	require.Equal(t, 201, do(t, "POST", "/api-keys", org.WriteKey, map[string]any{"name": "after revoke", "scopes": []string{"read"}}).Status)
}

func TestConcurrentKeyCreationRespectsLimit(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 0)
	var wg sync.WaitGroup
	codes := make(chan int, 12)
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := sys.Do("POST", "/api-keys", org.WriteKey, map[string]any{"name": "c", "scopes": []string{"read"}})
			if err == nil {
				codes <- r.Status
			}
		}()
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	require.Equal(t, 8, count[201], "%v", count)
	require.Equal(t, 4, count[409], "%v", count)
}
