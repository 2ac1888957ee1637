package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

// TestWrongJSONTypeNamesTheField sends bodies that are valid JSON but give a
// field the wrong JSON type: each answers 400 with a message naming the
// field and the expected type, never "Malformed JSON body".
func TestWrongJSONTypeNamesTheField(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 0)
	const someID = "00000000-0000-4000-8000-000000000001"
	for _, tc := range []struct {
		name, method, path, body, want string
	}{
		{"estimation repos string", "POST", "/cost-estimations", `{"repos":"x"}`, "repos: expected an array"},
		{"estimation repo element", "POST", "/cost-estimations", `{"repos":[7]}`, "repos[0]: expected an object"},
		{"estimation nested url", "POST", "/cost-estimations", `{"repos":[{"repo_url":true}]}`, "repos[0].repo_url: expected a string"},
		{"finding severity number", "PATCH", "/findings/" + someID, `{"severity":5}`, "severity: expected a string"},
		{"bulk ids string", "POST", "/findings/bulk", `{"ids":"abc","state":"resolved"}`, "ids: expected an array"},
		{"api key scopes string", "POST", "/api-keys", `{"name":"k","scopes":"read"}`, "scopes: expected an array"},
		{"api key name number", "POST", "/api-keys", `{"name":1,"scopes":["read"]}`, "name: expected a string"},
		{"scan target urls object", "POST", "/scans", `{"cost_estimation_id":"` + someID + `","target_urls":{}}`, "target_urls: expected an array"},
		{"webhook events element", "POST", "/webhooks", `{"url":"https://example.com/h","events":[1]}`, "events[0]: expected a string"},
		{"top level array", "POST", "/api-keys", `["read"]`, "expected a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, tc.method, tc.path, org.WriteKey, tc.body)
			systest.RequireError(t, r, 400, tc.want)
			require.NotContains(t, strings.ToLower(string(r.Body)), "malformed")
		})
	}
	// Broken JSON is still reported as such.
	systest.RequireError(t, do(t, "POST", "/cost-estimations", org.WriteKey, `{"repos":[`), 400, "Malformed JSON body")
	// So is a body of two values: the second is not ignored (the first
	// would otherwise have made a key).
	systest.RequireError(t, do(t, "POST", "/api-keys", org.WriteKey, `{"name":"k","scopes":["read"]} {"name":"x"}`), 400, "Malformed JSON body")
}
