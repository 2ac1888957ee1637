package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/systest"
)

func newOrg(t *testing.T, credits int) systest.Org {
	t.Helper()
	o, err := sys.NewOrg(credits, "auto")
	require.NoError(t, err)
	return o
}

func do(t *testing.T, method, path, key string, body any, hdr ...string) systest.Response {
	t.Helper()
	if len(hdr) == 0 {
		r, err := sys.Do(method, path, key, body)
		require.NoError(t, err)
		return r
	}
	var rd *strings.Reader
	if s, ok := body.(string); ok {
		rd = strings.NewReader(s)
	}
	req, err := http.NewRequest(method, sys.BaseURL+path, nil)
	require.NoError(t, err)
	if rd != nil {
		req, err = http.NewRequest(method, sys.BaseURL+path, rd)
		require.NoError(t, err)
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return systest.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// requireError checks the spec's error body.
func requireError(t *testing.T, r systest.Response, status int, msgContains string) {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
	m := r.JSON()
	require.NotNil(t, m, "error body is not JSON: %s", r.Body)
	require.EqualValues(t, status, m["statusCode"])
	require.Equal(t, http.StatusText(status), m["error"])
	msg, ok := m["message"].(string)
	require.True(t, ok, "message must be a string: %s", r.Body)
	require.Contains(t, strings.ToLower(msg), strings.ToLower(msgContains))
	require.Contains(t, r.Header.Get("Content-Type"), "application/json")
}

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
	org := newOrg(t, 10)
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
			requireError(t, r, tc.status, tc.msg)
		})
	}

	t.Run("read key on write endpoints", func(t *testing.T) {
		for _, ep := range []struct{ method, path string }{
			{"POST", "/api-keys"}, {"DELETE", "/api-keys/" + org.WriteKeyID}, {"POST", "/cost-estimations"}, {"POST", "/scans"},
		} {
			r := do(t, ep.method, ep.path, org.ReadKey, map[string]any{})
			requireError(t, r, 403, "missing required scope")
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

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 0)
	other := newOrg(t, 0)

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
			requireError(t, do(t, "POST", "/api-keys", org.WriteKey, tc.body), tc.status, tc.msg)
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
		requireError(t, do(t, "DELETE", "/api-keys/"+created["id"].(string), other.WriteKey, nil), 404, "not found")
		requireError(t, do(t, "DELETE", "/api-keys/not-a-uuid", org.WriteKey, nil), 400, "id")
		r := do(t, "DELETE", "/api-keys/"+created["id"].(string), org.WriteKey, nil)
		require.Equal(t, 204, r.Status, string(r.Body))
		require.Empty(t, r.Body)
		requireError(t, do(t, "GET", "/credits", key, nil), 401, "revoked")
	})
}

func TestActiveKeyLimit(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 0) // holds 2 active keys
	var ids []string
	for i := 0; i < 8; i++ {
		r := do(t, "POST", "/api-keys", org.WriteKey, map[string]any{"name": fmt.Sprint("k", i), "scopes": []string{"read"}})
		require.Equal(t, 201, r.Status, string(r.Body))
		ids = append(ids, r.JSON()["id"].(string))
	}
	requireError(t, do(t, "POST", "/api-keys", org.WriteKey, map[string]any{"name": "one too many", "scopes": []string{"read"}}), 409, "maximum")
	_, err := sys.Ctl("key", "create", "--org", org.ID, "--scopes", "read")
	require.Error(t, err, "the operator path enforces the same limit")
	require.Equal(t, 204, do(t, "DELETE", "/api-keys/"+ids[0], org.WriteKey, nil).Status)
	require.Equal(t, 201, do(t, "POST", "/api-keys", org.WriteKey, map[string]any{"name": "after revoke", "scopes": []string{"read"}}).Status)
}

func TestConcurrentKeyCreationRespectsLimit(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 0)
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

func TestRateLimitPerKey(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 0)
	var limited systest.Response
	for i := 0; i < 200 && limited.Status == 0; i++ {
		r := do(t, "GET", "/credits", org.ReadKey, nil)
		require.NotEmpty(t, r.Header.Get("X-RateLimit-Limit"))
		require.NotEmpty(t, r.Header.Get("X-RateLimit-Remaining"))
		if r.Status == 429 {
			limited = r
		}
	}
	requireError(t, limited, 429, "rate limit")
	require.NotEmpty(t, limited.Header.Get("Retry-After"))
	require.Equal(t, "0", limited.Header.Get("X-RateLimit-Remaining"))
	// Another key of the same organization is unaffected.
	r := do(t, "GET", "/credits", org.WriteKey, nil)
	require.Equal(t, 200, r.Status, string(r.Body))
}

func TestGatewayErrors(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 0)
	requireError(t, do(t, "GET", "/no-such-thing", org.ReadKey, nil), 404, "cannot get")
	requireError(t, do(t, "PUT", "/credits", org.WriteKey, "{}"), 405, "not allowed")
	requireError(t, do(t, "POST", "/api-keys", org.WriteKey, "{not json"), 400, "malformed")
	requireError(t, do(t, "POST", "/api-keys", org.WriteKey, `{"name":"x","scopes":["read"],"surprise":1}`), 400, "surprise")
	big := `{"name":"` + strings.Repeat("a", 3<<20) + `"}`
	requireError(t, do(t, "POST", "/api-keys", org.WriteKey, big), 413, "too large")
	r := do(t, "GET", "/credits", org.ReadKey, nil)
	require.NotEmpty(t, r.Header.Get("X-Request-Id"))
	for k := range r.Header {
		require.False(t, strings.HasPrefix(strings.ToLower(k), "grpc-"), "leaked header %s", k)
	}
}

func TestCreditsAndRepos(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 7)
	r := do(t, "GET", "/credits", org.ReadKey, nil)
	require.Equal(t, 200, r.Status)
	require.Equal(t, map[string]any{"balance": float64(7)}, r.JSON())

	g, err := sys.Ctl("credits", "grant", "--org", org.ID, "--amount", "5")
	require.NoError(t, err)
	require.Equal(t, map[string]any{"org_id": org.ID, "balance": float64(12)}, g)
	s, err := sys.Ctl("credits", "show", "--org", org.ID)
	require.NoError(t, err)
	require.EqualValues(t, 12, s["balance"])

	r = do(t, "GET", "/repos", org.ReadKey, nil)
	require.Equal(t, 200, r.Status)
	require.EqualValues(t, 0, r.JSON()["total"])
	out, err := sys.CtlRaw([]string{"REPO_TOKEN=ghp_secret_value"}, "repo", "connect", "--org", org.ID, "--url", "https://git.example.com/acme/api.git", "--token-env", "REPO_TOKEN")
	require.NoError(t, err)
	require.Contains(t, string(out), `"url":"https://git.example.com/acme/api.git"`)
	r = do(t, "GET", "/repos", org.ReadKey, nil)
	require.Equal(t, 200, r.Status)
	require.NotContains(t, string(r.Body), "ghp_secret_value")
	data := r.JSON()["data"].([]any)
	require.Len(t, data, 1)
	repo := data[0].(map[string]any)
	require.Equal(t, "https://git.example.com/acme/api.git", repo["url"])
	for _, f := range []string{"id", "url", "default_branch", "created_at"} {
		require.Contains(t, repo, f)
	}
	// Another organization sees none of it.
	other := newOrg(t, 0)
	require.EqualValues(t, 0, do(t, "GET", "/repos", other.ReadKey, nil).JSON()["total"])
	require.EqualValues(t, 0, do(t, "GET", "/credits", other.ReadKey, nil).JSON()["balance"])
}

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

// TestTracePropagation: one request's trace id appears in the gateway's
// access log and in the auth service's RPC log: the W3C trace context
// travels from the gateway over gRPC, under the gateway's request id.
func TestTracePropagation(t *testing.T) {
	t.Parallel()
	org := newOrg(t, 0)
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
	org := newOrg(t, 0)
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
	require.NotContains(t, sys.Log.String(), forgedTrace)
	require.NotContains(t, sys.Log.String(), "tenant=victim")
}
