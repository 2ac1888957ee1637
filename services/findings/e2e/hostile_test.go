package e2e

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestTextThatCannotBeStoredIsRefusedByName: text that is not UTF-8 or that
// holds the NUL character, in a query parameter, a path segment or a JSON
// body field of any service's endpoint, answers the spec's 400 naming the
// field, and changes nothing. (Such a query parameter or path segment
// answered 500, protobuf refusing to marshal it in the gateway, and such a
// body field 500 too, PostgreSQL refusing to store it.)
func TestTextThatCannotBeStoredIsRefusedByName(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	scan := newScan(t, o, "https://git.example.com/acme/hostile")
	ids := report(t, scan, fnd("h1", "high"), fnd("h2", "low"))
	const utf8, nul = " must be valid UTF-8", " must not contain the NUL character (U+0000)"
	for _, tc := range []struct {
		method, path, body, msg string
	}{
		{"GET", "/findings?q=%FF", "", "q" + utf8},
		{"GET", "/findings?q=a%00b", "", "q" + nul},
		{"GET", "/findings?tag=%C3%28&severity=high", "", "tag" + utf8},
		{"GET", "/findings?severity=%ED%A0%80", "", "severity" + utf8},
		{"GET", "/findings?found_since=%FF", "", "found_since" + utf8},
		{"GET", "/findings?scan_id=%FF", "", "scan_id" + utf8},
		{"GET", "/scans/" + scan + "/findings?repo_url=%E9", "", "repo_url" + utf8},
		{"GET", "/scans/" + scan + "/findings/export?affected_file=caf%E9", "", "affected_file" + utf8},
		{"GET", "/scans?sort_order=%C3%28", "", "sort_order" + utf8},
		{"GET", "/findings/%FF", "", "id" + utf8},
		{"GET", "/findings/%FF/history", "", "id" + utf8},
		{"GET", "/scans/%FF", "", "id" + utf8},
		{"GET", "/scans/%FF/status", "", "id" + utf8},
		{"GET", "/cost-estimations/%FF", "", "id" + utf8},
		{"PATCH", "/findings/" + ids[0], `{"state":"resolved","reason":"a\u0000b"}`, "reason" + nul},
		{"PATCH", "/findings/" + ids[0], `{"severity":"low","severity_reason":"\u0000"}`, "severity_reason" + nul},
		{"POST", "/findings/" + ids[0] + "/comments", `{"comment":"see\u0000"}`, "comment" + nul},
		{"POST", "/findings/bulk", `{"ids":["` + ids[0] + `","` + ids[1] + `"],"state":"resolved","state_reason":"\u0000"}`, "state_reason" + nul},
		{"POST", "/findings/bulk", `{"filter":{"tag":"t\u0000"},"state":"resolved"}`, "filter.tag" + nul},
		{"POST", "/api-keys", `{"name":"ci\u0000","scopes":["read"]}`, "name" + nul},
		{"POST", "/context-documents", `{"name":"\u0000","content":"scope"}`, "name" + nul},
		{"POST", "/cost-estimations", `{"name":"x\u0000","repos":[{"source":"public","repo_url":"https://github.com/acme/shop"}]}`, "name" + nul},
		{"POST", "/cost-estimations", `{"repos":[{"source":"public","repo_url":"https://github.com/acme/shop\u0000"}]}`, "repos[0].repo_url" + nul},
		{"POST", "/webhooks", `{"url":"https://hooks.example.com/x","events":["finding.created"],"description":"\u0000"}`, "description" + nul},
		{"POST", "/scans", `{"cost_estimation_id":"` + uuid.NewString() + `","repos":[{"url":"https://github.com/acme/shop","branch":"main"}],"custom_context":"\u0000"}`, "custom_context" + nul},
	} {
		var body any
		if tc.body != "" {
			body = []byte(tc.body)
		}
		requireError(t, do(t, tc.method, tc.path, o.WriteKey, body), 400, tc.msg)
	}
	// Nothing changed.
	for _, id := range ids {
		f := do(t, "GET", "/findings/"+id, o.ReadKey, nil)
		require.Equal(t, 200, f.Status, string(f.Body))
		require.Equal(t, "open", f.JSON()["state"])
		h := do(t, "GET", "/findings/"+id+"/history", o.ReadKey, nil)
		require.Equal(t, 200, h.Status, string(h.Body))
		require.Empty(t, h.JSON()["data"], "no audit entry")
	}
	keys := do(t, "GET", "/api-keys", o.ReadKey, nil)
	require.NotContains(t, string(keys.Body), "ci\\u0000")
}

// TestHostileRequestsNeverFail sends seeded random requests through the
// gateway: every endpoint that takes a path id or a query, with hostile
// values (text that is not UTF-8, NUL and other controls, numbers out of
// range, dates at the ends of time, wildcards, quotes, huge and empty
// values) in any parameter, and JSON bodies whose fields hold such values
// or the wrong types. None may answer 5xx, and every error must carry the
// spec's body. (Before the text checks, any of them with a query parameter
// or path segment that is not UTF-8 answered 500.)
func TestHostileRequestsNeverFail(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	scan := newScan(t, o, "https://git.example.com/acme/shop")
	ids := report(t, scan, fnd("r1", "high"), fnd("r2", "low"))
	rng := rand.New(rand.NewPCG(20261130, 1))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	values := []string{
		"", "%20", "%FF", "%C3%28", "%ED%A0%80", "a%00b", "%E2%80%AE", "x%09y", "%0A", "%25", "_", "%5C", "'", "%22", "%27%3B--",
		"0", "-1", "1", "2", "100", "101", "abc", "1e3", "1.5", "99999999999999999999", "2147483648", "9223372036854775807",
		"high", "HIGH", "open", "severity", "found_at", "updated_at", "ASC", "desc",
		"2026-02-01T00:00:00Z", "0000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-02-01T00:00:00%2B25:00",
		"2026-02-01", "-infinity", "NaN", "https://git.example.com/acme/shop", "http://", "https://%FF", "injection", "t1",
		"src/", "src%2F..%2F..", strings.Repeat("%F0%9F%98%80", 60), strings.Repeat("a", 199), strings.Repeat("%C3%A9", 201),
		uuid.NewString(), "00000000-0000-0000-0000-000000000000", "{" + uuid.NewString() + "}", strings.ToUpper(ids[0]),
	}
	params := []string{"page", "limit", "offset", "severity", "state", "scan_id", "sort_by", "sort_order", "found_since", "found_until",
		"repo_url", "category", "tag", "affected_file", "q", "status", "format", "events"}
	pathIDs := []string{"%FF", "not-a-uuid", "{" + ids[0] + "}", strings.ToUpper(ids[0]), strings.Repeat("a", 3000), uuid.NewString(), "%2F", "a%00b"}
	gets := []string{"/findings", "/findings/export", "/scans/{s}/findings", "/scans/{s}/findings/export", "/scans", "/cost-estimations",
		"/findings/{i}/history", "/webhooks", "/webhooks/{i}/deliveries", "/api-keys", "/repos", "/context-documents", "/credits",
		"/scans/{s}", "/scans/{s}/status", "/findings/{i}", "/cost-estimations/{i}"}
	id := func(valid string) string {
		if rng.IntN(2) == 0 {
			return valid
		}
		return pick(pathIDs)
	}
	check := func(method, path string, body []byte) {
		r := do(t, method, path, o.WriteKey, body)
		require.Less(t, r.Status, 500, "%s %s %s: %s", method, path, body, r.Body)
		if r.Status >= 400 {
			m := r.JSON()
			require.NotNil(t, m, "%s %s: error body is not JSON: %s", method, path, r.Body)
			require.EqualValues(t, r.Status, m["statusCode"], "%s %s: %s", method, path, r.Body)
			require.NotEmpty(t, m["error"], "%s %s: %s", method, path, r.Body)
			require.NotEmpty(t, m["message"], "%s %s: %s", method, path, r.Body)
		}
	}
	for range 1500 {
		p := strings.ReplaceAll(strings.ReplaceAll(pick(gets), "{s}", id(scan)), "{i}", id(ids[0]))
		var q []string
		for range 1 + rng.IntN(4) {
			q = append(q, pick(params)+"="+pick(values))
		}
		check("GET", p+"?"+strings.Join(q, "&"), nil)
	}
	fieldValues := []string{`null`, `""`, `"open"`, `"accepted_risk"`, `"high"`, `1`, `-1`, `1e400`, `1.5`, `true`, `[]`, `{}`, `[1]`, `["x"]`,
		`"` + ids[1] + `"`, `"` + uuid.NewString() + `"`, `"not-a-uuid"`, `"\u0000"`, "\"\xff\xfe\"", `"\ud800"`, `"a\u0001b"`, `"` + strings.Repeat("x", 2001) + `"`,
		`"2026-02-01T00:00:00Z"`, `"0000-01-01T00:00:00Z"`, `"9999-12-31T23:59:59Z"`, `"https://127.0.0.1/hook"`, `"http://example.com/h"`,
		`["finding.created"]`, `["nope"]`, `[null]`, `{"severity":"high"}`, `{"q":"\u0000"}`, `{"tag":"\u0000"}`, `{"found_since":"0000-01-01T00:00:00Z"}`,
		`[{"source":"public","repo_url":"https://github.com/a/b\u0000"}]`, `[{"source":"upload","repo_url":"upload://\u0000"}]`, `9223372036854775808`}
	fields := []string{"state", "severity", "duplicate_of", "reason", "state_reason", "severity_reason", "ids", "filter", "expires_at", "url", "events",
		"description", "comment", "name", "scopes", "repos", "cost_estimation_id", "target_urls", "custom_context", "auth_instructions", "content",
		"context_document_ids"}
	writes := []struct{ method, path string }{{"PATCH", "/findings/" + ids[0]}, {"POST", "/findings/bulk"}, {"POST", "/webhooks"},
		{"POST", "/findings/" + ids[0] + "/comments"}, {"POST", "/api-keys"}, {"POST", "/scans"}, {"POST", "/cost-estimations"},
		{"POST", "/context-documents"}, {"POST", "/scans/" + scan + "/cancel"}, {"PATCH", "/findings/%FF"}, {"DELETE", "/webhooks/%FF"}, {"DELETE", "/api-keys/a%00b"}}
	for range 800 {
		w := writes[rng.IntN(len(writes))]
		var kv []string
		for range 1 + rng.IntN(4) {
			kv = append(kv, `"`+pick(fields)+`":`+pick(fieldValues))
		}
		body := "{" + strings.Join(kv, ",") + "}"
		switch rng.IntN(10) {
		case 0:
			body = pick(fieldValues)
		case 1:
			body = body[:rng.IntN(len(body))]
		}
		check(w.method, w.path, []byte(body))
	}
}
