// Package openapi3 turns the Swagger 2.0 document that protoc-gen-openapiv2
// generates from the protos' HTTP rules into the OpenAPI 3.0 document the
// gateway publishes at GET /openapi.json. It adds what the generator cannot
// know: the X-Api-Key security scheme, the upload route the gateway serves
// itself, the export's media types, the real success statuses (201 for a
// POST, 204 for a DELETE), the error responses with the spec's error body,
// the enumerations of the REST specification, and a title and version.
//
// The conversion runs at `make gen` time; the result is committed and CI
// checks it with an OpenAPI linter and a TypeScript client generator.
package openapi3

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// Version is the API document's version: the /v1 surface.
const Version = "1.0.0"

type obj = map[string]any

// Enumerations of the REST specification, by where they occur.
var (
	severities   = vocab.Severities.Strings()
	states       = vocab.FindingStates.Strings()
	sortOrders   = []string{"ASC", "DESC"}
	scanStatuses = vocab.ScanStatuses.Strings()
	repoSources  = vocab.RepoSources.Strings()
	categories   = vocab.Categories.Strings()
)

// queryEnums are the enumerations of query parameters, by path prefix and name.
var queryEnums = map[string]map[string][]string{
	"/v1/findings": {"severity": severities, "state": states, "sort_by": {"found_at", "updated_at", "severity"}, "sort_order": sortOrders,
		"category": categories},
	"/v1/scans/{id}/findings": {"severity": severities, "state": states, "sort_by": {"found_at", "updated_at", "severity"},
		"sort_order": sortOrders, "format": {"json", "csv", "sarif"}, "category": categories},
	"/v1/scans": {"status": scanStatuses, "sort_by": {"created_at", "updated_at", "status"}, "sort_order": sortOrders},
}

// propertyEnums are the enumerations of schema properties, by schema and property.
var propertyEnums = map[string]map[string][]string{
	"v1Finding":                        {"severity": severities, "state": states},
	"v1GetFindingResponse":             {"severity": severities, "state": states, "scan_type": {"full", "pr"}},
	"FindingsServiceUpdateFindingBody": {"severity": severities, "state": states},
	"v1UpdateFindingResponse":          {"severity": severities, "state": states},
	"v1TriageEntry":                    {"reaction": states, "source": {"github", "slack", "web", "api", "agent"}},
	"v1Scan":                           {"status": scanStatuses, "scan_type": {"full", "pr"}},
	"v1GetScanResponse":                {"status": scanStatuses, "scan_type": {"full", "pr"}},
	"v1GetScanStatusResponse":          {"status": scanStatuses},
	"v1RepoRef":                        {"source": repoSources},
	"v1FindingsFilter":                 {"severity": severities, "state": states, "category": categories},
	"v1RepoResult":                     {"scan_type": {"full", "pr"}},
	"v1ScanRepo":                       {"source": repoSources},
}

// Convert returns the OpenAPI 3.0 document for a Swagger 2.0 document.
func Convert(swagger []byte) ([]byte, error) {
	var in struct {
		Paths       map[string]map[string]obj `json:"paths"`
		Definitions map[string]obj            `json:"definitions"`
		Tags        []obj                     `json:"tags"`
	}
	if err := json.Unmarshal(swagger, &in); err != nil {
		return nil, fmt.Errorf("read Swagger document: %w", err)
	}
	schemas := obj{}
	for name, def := range in.Definitions {
		s := rewriteRefs(def).(obj)
		for prop, values := range propertyEnums[name] {
			if props, ok := s["properties"].(obj); ok {
				if p, ok := props[prop].(obj); ok {
					p["enum"] = values
				}
			}
		}
		schemas[name] = s
	}
	schemas["Error"] = obj{
		"type":        "object",
		"description": "Every error: the HTTP status, a message that says what is wrong, and the status text.",
		"required":    []string{"statusCode", "message", "error"},
		"properties": obj{
			"statusCode": obj{"type": "integer", "format": "int32", "example": 400},
			"message":    obj{"type": "string", "example": "sort_order must be one of: ASC, DESC"},
			"error":      obj{"type": "string", "example": "Bad Request"},
		},
	}
	schemas["Upload"] = obj{
		"type":     "object",
		"required": []string{"id", "repo_url", "size_bytes", "sha256", "created_at"},
		"properties": obj{
			"id":         obj{"type": "string", "format": "uuid"},
			"repo_url":   obj{"type": "string", "description": "upload://<id>, the repo_url to use in a cost estimation", "example": "upload://0b9f…"},
			"size_bytes": obj{"type": "integer", "format": "int32"},
			"sha256":     obj{"type": "string", "description": "lowercase hex SHA-256 of the archive"},
			"created_at": obj{"type": "string", "format": "date-time"},
		},
	}

	paths := obj{}
	for path, ops := range in.Paths {
		item := obj{}
		for method, op := range ops {
			item[method] = operation(path, method, op)
		}
		paths[path] = item
	}
	paths["/v1/uploads"] = obj{"post": uploadOperation()}
	schemas["InboundEventResult"] = obj{
		"type":     "object",
		"required": []string{"status", "finding_id", "entry_id", "state", "text"},
		"properties": obj{
			"status": obj{"type": "string", "enum": []string{"recorded", "changed", "ignored", "pong"},
				"description": "recorded: a triage thread entry was added; changed: the finding's state changed; ignored: the event is about no finding; pong: the git host's ping"},
			"finding_id": obj{"type": "string", "description": "the finding the event was about; empty when ignored"},
			"entry_id":   obj{"type": "string", "description": "the triage thread entry a comment added"},
			"state":      obj{"type": "string", "description": "the finding's state after the event"},
			"text":       obj{"type": "string", "description": "a short answer for humans (the chat shows it)"},
		},
	}
	paths["/v1/integrations/{integration_id}/events/{provider}"] = obj{"post": inboundOperation()}

	tags := []obj{{"name": "UploadService", "description": "Source archives to estimate and scan."},
		{"name": "InboundEvents", "description": "Signed events from the git host and the chat: comments, reactions and commands that triage findings."}}
	seen := map[any]bool{"UploadService": true, "InboundEvents": true}
	for _, t := range in.Tags {
		if !seen[t["name"]] {
			seen[t["name"]] = true
			tags = append(tags, t)
		}
	}
	sort.Slice(tags, func(i, j int) bool { return fmt.Sprint(tags[i]["name"]) < fmt.Sprint(tags[j]["name"]) })

	prune(schemas, paths, errorResponses())
	out := obj{
		"openapi": "3.0.3",
		"info": obj{
			"title":   "vulnscan API",
			"version": Version,
			"description": "The vulnscan REST API: estimate, run and triage vulnerability scans of source repositories. " +
				"Every /v1 request carries an API key in the X-Api-Key header; GET needs the read scope, every other method write. " +
				"Errors are {statusCode, message, error}.",
			"license": obj{"name": "Proprietary", "url": "https://github.com/vulnscan/vulnscan"},
		},
		"servers":  []obj{{"url": "http://127.0.0.1:8080", "description": "make run"}},
		"tags":     tags,
		"security": []obj{{"ApiKey": []string{}}},
		"paths":    paths,
		"components": obj{
			"schemas": schemas,
			"securitySchemes": obj{"ApiKey": obj{"type": "apiKey", "in": "header", "name": "X-Api-Key",
				"description": "An organization's API key (vsk_…), made with vulnscanctl key create or POST /v1/api-keys."}},
			"responses": errorResponses(),
		},
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// errorStatuses are the error responses every operation can give, with the
// reason each one is given.
var errorStatuses = map[string]string{
	"400": "The request is invalid; the message names the field or parameter.",
	"401": "The API key is missing, malformed, unknown, revoked or expired.",
	"403": "The API key lacks the scope the method needs.",
	"404": "The resource does not exist or belongs to another organization.",
	"429": "The key's rate limit is exhausted; retry after Retry-After seconds.",
	"500": "Internal server error; the cause is logged with the request id.",
}

func errorResponses() obj {
	out := obj{}
	for code, why := range errorStatuses {
		out["Error"+code] = obj{"description": why, "content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Error"}}}}
	}
	out["Error402"] = obj{"description": "The organization's credit balance does not cover the cost.",
		"content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Error"}}}}
	out["Error413"] = obj{"description": "The request body is too large.",
		"content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Error"}}}}
	out["Error409"] = obj{"description": "The request conflicts with what was already done (for example an inbound event received before).",
		"content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Error"}}}}
	return out
}

func withErrors(responses obj, extra ...string) obj {
	for code := range errorStatuses {
		responses[code] = obj{"$ref": "#/components/responses/Error" + code}
	}
	for _, code := range extra {
		responses[code] = obj{"$ref": "#/components/responses/Error" + code}
	}
	return responses
}

func operation(path, method string, op obj) obj {
	out := obj{}
	for _, k := range []string{"operationId", "tags", "summary", "description"} {
		if v, ok := op[k]; ok {
			out[k] = v
		}
	}
	if _, ok := out["summary"]; !ok {
		out["summary"] = strings.ToUpper(method) + " " + path
	}
	var params []any
	ps, _ := op["parameters"].([]any)
	for _, x := range ps {
		p := x.(obj)
		if p["in"] == "body" {
			out["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": rewriteRefs(p["schema"])}}}
			continue
		}
		schema := obj{}
		for _, k := range []string{"type", "format", "items", "default", "enum"} {
			if v, ok := p[k]; ok {
				schema[k] = rewriteRefs(v)
			}
		}
		name := p["name"].(string)
		for prefix, enums := range queryEnums {
			if p["in"] == "query" && (path == prefix || strings.HasPrefix(path, prefix+"/")) && longestPrefix(path, prefix) {
				if values, ok := enums[name]; ok {
					schema["enum"] = values
				}
			}
		}
		if name == "id" && p["in"] == "path" {
			schema["format"] = "uuid"
		}
		if (name == "found_since" || name == "found_until") && p["in"] == "query" {
			schema["format"] = "date-time"
		}
		q := obj{"name": name, "in": p["in"], "schema": schema}
		if p["required"] == true || p["in"] == "path" {
			q["required"] = true
		}
		if d, ok := p["description"]; ok {
			q["description"] = d
		}
		params = append(params, q)
	}
	if params != nil {
		out["parameters"] = params
	}

	var ok obj
	if r, _ := op["responses"].(obj); r != nil {
		ok, _ = r["200"].(obj)
	}
	responses := obj{}
	switch {
	case strings.HasSuffix(path, "/findings/export"):
		responses["200"] = obj{"description": "The scan's findings in the requested format (format=json, csv or sarif).",
			"content": obj{
				"application/json":       obj{"schema": obj{"type": "array", "items": obj{"$ref": "#/components/schemas/v1Finding"}}},
				"text/csv":               obj{"schema": obj{"type": "string"}},
				"application/sarif+json": obj{"schema": obj{"type": "object", "description": "A SARIF 2.1.0 log.", "additionalProperties": true}},
			}}
	case method == "delete":
		responses["204"] = obj{"description": "Done; no body."}
	default:
		code, what := "200", "OK"
		if method == "post" {
			code, what = "201", "Created"
		}
		if method == "post" && strings.HasSuffix(path, "/redeliver") { // queued for the delivery worker
			code, what = "202", "Accepted"
		}
		if method == "post" && actsOnExisting(path) {
			code, what = "200", "OK"
		}
		r := obj{"description": what}
		if ok != nil {
			if s, has := ok["schema"]; has {
				r["content"] = obj{"application/json": obj{"schema": rewriteRefs(s)}}
			}
		}
		responses[code] = r
	}
	switch {
	case path == "/v1/scans" && method == "post":
		withErrors(responses, "402", "413")
	case method == "post" || method == "patch":
		withErrors(responses, "413")
	default:
		withErrors(responses)
	}
	out["responses"] = responses
	return out
}

// longestPrefix reports whether prefix is the longest queryEnums prefix of path.
func longestPrefix(path, prefix string) bool {
	for other := range queryEnums {
		if len(other) > len(prefix) && (path == other || strings.HasPrefix(path, other+"/")) {
			return false
		}
	}
	return true
}

func uploadOperation() obj {
	archive := obj{"schema": obj{"type": "string", "format": "binary"}}
	return obj{
		"operationId": "UploadService_CreateUpload",
		"tags":        []string{"UploadService"},
		"summary":     "Upload a source archive",
		"description": "The raw body is a zip or tar.gz archive of at most 100 MiB. Archives with absolute paths, '..', " +
			"links leaving the root, or expanding past 1 GiB are refused. Use the answer's repo_url with source upload in a cost estimation.",
		"requestBody": obj{"required": true, "content": obj{"application/zip": archive, "application/gzip": archive}},
		"responses": withErrors(obj{"201": obj{"description": "Created",
			"content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Upload"}}}}}, "413"),
	}
}

func inboundOperation() obj {
	str := obj{"type": "string"}
	header := func(name, desc string) obj {
		return obj{"name": name, "in": "header", "required": false, "schema": str, "description": desc}
	}
	return obj{
		"operationId": "InboundEvents_HandleEvent",
		"tags":        []string{"InboundEvents"},
		"summary":     "Receive an integration's signed event",
		"description": "The public endpoint of a github or slack integration, configured as the git host's webhook URL or the chat app's " +
			"request URL. No API key: the request is authenticated by its signature under the integration's inbound secret " +
			"(github: X-Hub-Signature-256 = sha256=HMAC-SHA256(body), X-GitHub-Delivery as replay key; slack: " +
			"X-Slack-Signature = v0=HMAC-SHA256(\"v0:\" + X-Slack-Request-Timestamp + \":\" + body), a 5-minute window and the " +
			"signature as replay key). Comments and reactions become triage thread entries with source github or slack; " +
			"\"/vulnscan STATE [FINDING_ID] [REASON]\" changes the finding's state as PATCH /v1/findings/{id} does. " +
			"401 bad signature or stale timestamp, 403 state change by an unmapped author, 404 unknown integration or finding, " +
			"409 replayed event, 413 body over 1 MiB, 429 rate limited.",
		"security": []obj{},
		"parameters": []obj{
			{"name": "integration_id", "in": "path", "required": true, "schema": obj{"type": "string", "format": "uuid"}},
			{"name": "provider", "in": "path", "required": true, "schema": obj{"type": "string", "enum": []string{"github", "slack"}}},
			header("X-Hub-Signature-256", "github: sha256=<hex HMAC-SHA256 of the body>"),
			header("X-GitHub-Event", "github: issue_comment, commit_comment, pull_request_review_comment, reaction or ping"),
			header("X-GitHub-Delivery", "github: unique delivery id; a repeat is refused with 409"),
			header("X-Slack-Signature", "slack: v0=<hex HMAC-SHA256 of v0:timestamp:body>"),
			header("X-Slack-Request-Timestamp", "slack: Unix seconds, within 5 minutes of the server's clock"),
		},
		"requestBody": obj{"required": true, "content": obj{
			"application/json":                  obj{"schema": obj{"type": "object", "description": "a GitHub-style webhook payload"}},
			"application/x-www-form-urlencoded": obj{"schema": obj{"type": "object", "description": "a Slack-style slash command or interactive action (payload)"}},
		}},
		"responses": withErrors(obj{"200": obj{"description": "OK",
			"content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/InboundEventResult"}}}}}, "409", "413"),
	}
}

// rewriteRefs moves Swagger definition references to OpenAPI components.
func rewriteRefs(v any) any {
	switch x := v.(type) {
	case obj:
		out := obj{}
		for k, val := range x {
			if k == "$ref" {
				if s, ok := val.(string); ok {
					out[k] = strings.Replace(s, "#/definitions/", "#/components/schemas/", 1)
					continue
				}
			}
			out[k] = rewriteRefs(val)
		}
		// OpenAPI 3.0 ignores the siblings of a $ref (a field's title or
		// description): keep them by referring through allOf.
		if ref, ok := out["$ref"]; ok && len(out) > 1 {
			delete(out, "$ref")
			out["allOf"] = []any{obj{"$ref": ref}}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = rewriteRefs(val)
		}
		return out
	default:
		return v
	}
}

// prune drops the schemas nothing refers to (the generator also emits the
// messages of RPCs whose answers the gateway renders differently).
func prune(schemas obj, roots ...any) {
	used := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case obj:
			for k, val := range x {
				if s, ok := val.(string); ok && k == "$ref" {
					name := strings.TrimPrefix(s, "#/components/schemas/")
					if name != s && !used[name] {
						used[name] = true
						walk(schemas[name])
					}
					continue
				}
				walk(val)
			}
		case []any:
			for _, val := range x {
				walk(val)
			}
		case []obj:
			for _, val := range x {
				walk(val)
			}
		}
	}
	for _, r := range roots {
		walk(r)
	}
	for name := range schemas {
		if !used[name] {
			delete(schemas, name)
		}
	}
}

// actsOnExisting reports whether a POST acts on resources that already exist
// (cancelling a scan, a bulk triage change) and so answers 200, not 201,
// as the gateway does.
func actsOnExisting(path string) bool {
	return strings.HasSuffix(path, "/cancel") || path == "/v1/findings/bulk"
}
