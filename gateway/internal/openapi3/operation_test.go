package openapi3

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRewriteRefs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   any
		want any
	}{
		{"bare reference", obj{"$ref": "#/definitions/v1Scan"}, obj{"$ref": "#/components/schemas/v1Scan"}},
		{"reference with a description goes through allOf", obj{"$ref": "#/definitions/v1Scan", "description": "the scan"},
			obj{"allOf": []any{obj{"$ref": "#/components/schemas/v1Scan"}}, "description": "the scan"}},
		{"nested in arrays and objects", obj{"type": "array", "items": obj{"$ref": "#/definitions/v1Finding"}, "x": []any{obj{"$ref": "#/definitions/a"}, 3.0}},
			obj{"type": "array", "items": obj{"$ref": "#/components/schemas/v1Finding"}, "x": []any{obj{"$ref": "#/components/schemas/a"}, 3.0}}},
		{"a property named $ref that is not a string", obj{"$ref": obj{"type": "string"}}, obj{"$ref": obj{"type": "string"}}},
		{"scalars pass", "text", "text"},
	} {
		require.Equal(t, tc.want, rewriteRefs(tc.in), tc.name)
	}
}

// prune keeps the schemas reachable from the roots, through any depth, and
// drops the rest.
func TestPrune(t *testing.T) {
	t.Parallel()
	ref := func(n string) obj { return obj{"$ref": "#/components/schemas/" + n} }
	schemas := obj{
		"A":      obj{"properties": obj{"b": ref("B")}},
		"B":      obj{"items": []any{ref("C")}},
		"C":      obj{"type": "string"},
		"Cycle":  obj{"properties": obj{"self": ref("Cycle")}},
		"Unused": obj{"properties": obj{"a": ref("A")}},
	}
	prune(schemas, obj{"paths": []obj{{"x": ref("A")}}}, obj{"y": ref("Cycle")}, obj{"ext": obj{"$ref": "https://elsewhere/X"}})
	var names []string
	for n := range schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	require.Equal(t, []string{"A", "B", "C", "Cycle"}, names)
}

// A synthetic Swagger document exercises each rule of the conversion in
// isolation from the real protos.
func TestConvertRules(t *testing.T) {
	t.Parallel()
	swagger := obj{
		"tags": []obj{{"name": "ScanService"}, {"name": "AService"}, {"name": "ScanService"}, {"name": "UploadService", "description": "dup"}},
		"definitions": obj{
			"v1Scan":    obj{"type": "object", "properties": obj{"status": obj{"type": "string"}, "other": obj{"$ref": "#/definitions/v1Other"}}},
			"v1Other":   obj{"type": "object"},
			"v1Orphan":  obj{"type": "object"},
			"v1Finding": obj{"type": "object", "properties": obj{"severity": obj{"type": "string"}}},
		},
		"paths": obj{
			"/v1/scans": obj{
				"post": obj{"operationId": "ScanService_CreateScan", "parameters": []any{obj{"name": "body", "in": "body", "schema": obj{"$ref": "#/definitions/v1Scan"}}},
					"responses": obj{"200": obj{"schema": obj{"$ref": "#/definitions/v1Scan"}}}},
				"get": obj{"parameters": []any{obj{"name": "status", "in": "query", "type": "string"}, obj{"name": "format", "in": "query", "type": "string"}}},
			},
			"/v1/scans/{id}/findings": obj{"get": obj{"parameters": []any{
				obj{"name": "id", "in": "path", "type": "string"},
				obj{"name": "format", "in": "query", "type": "string"},
				obj{"name": "found_since", "in": "query", "type": "string"},
				obj{"name": "limit", "in": "query", "type": "integer", "format": "int32", "default": "50", "required": true, "description": "per page"},
			}}},
			"/v1/scans/{id}/cancel":                      obj{"post": obj{}},
			"/v1/scans/{id}":                             obj{"delete": obj{}},
			"/v1/webhooks/{id}/deliveries/{d}/redeliver": obj{"post": obj{}},
			"/v1/findings/{id}":                          obj{"patch": obj{}},
			"/v1/scans/{id}/findings/export":             obj{"get": obj{}},
		},
	}
	raw, err := json.Marshal(swagger)
	require.NoError(t, err)
	out, err := Convert(raw)
	require.NoError(t, err)
	require.Equal(t, byte('\n'), out[len(out)-1])
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out, &doc))
	paths := doc["paths"].(map[string]any)
	op := func(path, method string) map[string]any {
		t.Helper()
		return paths[path].(map[string]any)[method].(map[string]any)
	}
	codes := func(o map[string]any) []string {
		var cs []string
		for c := range o["responses"].(map[string]any) {
			cs = append(cs, c)
		}
		sort.Strings(cs)
		return cs
	}
	errs := []string{"400", "401", "403", "404", "429", "500"}
	with := func(first string, extra ...string) []string {
		cs := append(append([]string{first}, errs...), extra...)
		sort.Strings(cs)
		return cs
	}

	create := op("/v1/scans", "post")
	require.Equal(t, with("201", "402", "413"), codes(create))
	require.Equal(t, "ScanService_CreateScan", create["operationId"])
	require.Equal(t, "POST /v1/scans", create["summary"], "a summary is made when the generator gave none")
	require.Equal(t, map[string]any{"$ref": "#/components/schemas/v1Scan"},
		create["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"])
	require.NotContains(t, create, "parameters", "the body is not a parameter")

	require.Equal(t, with("200"), codes(op("/v1/scans", "get")))
	require.Equal(t, with("200", "413"), codes(op("/v1/scans/{id}/cancel", "post")), "cancelling acts on an existing scan")
	require.Equal(t, with("204"), codes(op("/v1/scans/{id}", "delete")))
	require.Equal(t, with("202", "413"), codes(op("/v1/webhooks/{id}/deliveries/{d}/redeliver", "post")))
	require.Equal(t, with("200", "413"), codes(op("/v1/findings/{id}", "patch")))
	export := op("/v1/scans/{id}/findings/export", "get")["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)
	require.ElementsMatch(t, []string{"application/json", "text/csv", "application/sarif+json"}, keys(export))

	params := func(o map[string]any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, p := range o["parameters"].([]any) {
			m := p.(map[string]any)
			out[m["name"].(string)] = m
		}
		return out
	}
	list := params(op("/v1/scans", "get"))
	require.Equal(t, toAny(scanStatuses), list["status"]["schema"].(map[string]any)["enum"])
	require.NotContains(t, list["format"]["schema"], "enum", "format is an enumeration of the findings listing only")
	findings := params(op("/v1/scans/{id}/findings", "get"))
	require.Equal(t, []any{"json", "csv", "sarif"}, findings["format"]["schema"].(map[string]any)["enum"], "the longest prefix's enumerations apply")
	require.Equal(t, map[string]any{"type": "string", "format": "uuid"}, findings["id"]["schema"])
	require.Equal(t, true, findings["id"]["required"], "path parameters are required")
	require.Equal(t, "date-time", findings["found_since"]["schema"].(map[string]any)["format"])
	require.Equal(t, map[string]any{"name": "limit", "in": "query", "required": true, "description": "per page",
		"schema": map[string]any{"type": "integer", "format": "int32", "default": "50"}}, findings["limit"])

	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	require.ElementsMatch(t, []string{"v1Scan", "v1Other", "v1Finding", "Error", "Upload", "InboundEventResult"}, keys(schemas),
		"unreferenced definitions are pruned")
	status := schemas["v1Scan"].(map[string]any)["properties"].(map[string]any)["status"].(map[string]any)
	require.Equal(t, toAny(scanStatuses), status["enum"])

	var tags []string
	for _, tg := range doc["tags"].([]any) {
		tags = append(tags, tg.(map[string]any)["name"].(string))
	}
	require.Equal(t, []string{"AService", "InboundEvents", "ScanService", "UploadService"}, tags, "tags are unique and sorted")
	require.Contains(t, paths, "/v1/uploads")
	require.Contains(t, paths, inboundPath)

	_, err = Convert([]byte("{not json"))
	require.ErrorContains(t, err, "read Swagger document")
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
