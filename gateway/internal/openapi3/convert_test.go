package openapi3

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/proto/gen/openapi"
)

const inboundPath = "/v1/integrations/{integration_id}/events/{provider}"

// The published document is the conversion of the generated Swagger
// document (make gen wrote it), and it says what clients need.
func TestPublishedDocument(t *testing.T) {
	swagger, err := os.ReadFile("../../../proto/gen/openapi/vulnscan.swagger.json")
	require.NoError(t, err)
	out, err := Convert(swagger)
	require.NoError(t, err)
	require.True(t, bytes.Equal(out, openapi.JSON), "proto/gen/openapi/vulnscan.openapi.json is stale: run make gen")

	var doc map[string]any
	require.NoError(t, json.Unmarshal(out, &doc))
	require.Equal(t, "3.0.3", doc["openapi"])
	info := doc["info"].(map[string]any)
	require.Equal(t, "vulnscan API", info["title"])
	require.Equal(t, Version, info["version"])
	require.Equal(t, []any{map[string]any{"ApiKey": []any{}}}, doc["security"], "every operation needs the key")
	scheme := doc["components"].(map[string]any)["securitySchemes"].(map[string]any)["ApiKey"].(map[string]any)
	require.Equal(t, map[string]any{"type": "apiKey", "in": "header", "name": "X-Api-Key"},
		map[string]any{"type": scheme["type"], "in": scheme["in"], "name": scheme["name"]})

	paths := doc["paths"].(map[string]any)
	op := func(path, method string) map[string]any {
		t.Helper()
		item, ok := paths[path].(map[string]any)
		require.True(t, ok, "path %s", path)
		o, ok := item[method].(map[string]any)
		require.True(t, ok, "%s %s", method, path)
		return o
	}
	responses := func(o map[string]any) map[string]any { return o["responses"].(map[string]any) }

	for path, item := range paths {
		for method, o := range item.(map[string]any) {
			r := responses(o.(map[string]any))
			for _, code := range []string{"400", "401", "403", "404", "429", "500"} {
				require.Contains(t, r, code, "%s %s", method, path)
			}
			switch {
			case path == inboundPath:
				// The chat shows a slash command's answer only on 200.
				require.Contains(t, r, "200")
			case method == "post" && (path == "/v1/scans/{id}/cancel" || path == "/v1/findings/bulk"):
				// These act on what exists; the gateway answers 200.
				require.Contains(t, r, "200", "%s %s", method, path)
				require.NotContains(t, r, "201", "%s %s", method, path)
			case method == "post":
				want := "201"
				if strings.HasSuffix(path, "/redeliver") { // queued, not made
					want = "202"
				}
				require.Contains(t, r, want, "%s %s", method, path)
				require.NotContains(t, r, "200")
			case method == "delete":
				require.Contains(t, r, "204", "%s %s", method, path)
			default:
				require.Contains(t, r, "200", "%s %s", method, path)
			}
		}
	}
	require.Contains(t, responses(op("/v1/scans", "post")), "402")

	// Inbound events take no key: their signature authenticates them.
	in := op(inboundPath, "post")
	require.Equal(t, []any{}, in["security"])
	require.Contains(t, responses(in), "409")
	require.Contains(t, in["requestBody"].(map[string]any)["content"], "application/x-www-form-urlencoded")
	var headers []any
	for _, p := range in["parameters"].([]any) {
		if p := p.(map[string]any); p["in"] == "header" {
			headers = append(headers, p["name"])
		}
	}
	require.Subset(t, headers, []any{"X-Hub-Signature-256", "X-GitHub-Delivery", "X-Slack-Signature", "X-Slack-Request-Timestamp"})

	upload := op("/v1/uploads", "post")
	content := upload["requestBody"].(map[string]any)["content"].(map[string]any)
	require.Contains(t, content, "application/zip")
	require.Contains(t, content, "application/gzip")

	export := responses(op("/v1/scans/{id}/findings/export", "get"))["200"].(map[string]any)["content"].(map[string]any)
	for _, mt := range []string{"application/json", "text/csv", "application/sarif+json"} {
		require.Contains(t, export, mt)
	}

	enumOf := func(o map[string]any, name string) []any {
		for _, p := range o["parameters"].([]any) {
			if p := p.(map[string]any); p["name"] == name {
				e, _ := p["schema"].(map[string]any)["enum"].([]any)
				return e
			}
		}
		return nil
	}
	require.Equal(t, []any{"ASC", "DESC"}, enumOf(op("/v1/findings", "get"), "sort_order"))
	require.Equal(t, []any{"found_at", "updated_at", "severity"}, enumOf(op("/v1/scans/{id}/findings", "get"), "sort_by"))
	require.Equal(t, []any{"created_at", "updated_at", "status"}, enumOf(op("/v1/scans", "get"), "sort_by"))
	require.Equal(t, []any{"json", "csv", "sarif"}, enumOf(op("/v1/scans/{id}/findings/export", "get"), "format"))
	finding := doc["components"].(map[string]any)["schemas"].(map[string]any)["v1Finding"].(map[string]any)["properties"].(map[string]any)
	require.Equal(t, []any{"critical", "high", "medium", "low", "info"}, finding["severity"].(map[string]any)["enum"])
	require.Contains(t, finding, "line")
	require.Contains(t, finding, "fingerprint")
}
