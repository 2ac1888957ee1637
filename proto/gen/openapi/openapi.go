// Package openapi embeds the OpenAPI document generated from the protos'
// HTTP rules, served by the gateway at GET /openapi.json.
package openapi

import _ "embed"

// JSON is the published OpenAPI 3.0 document of the /v1 REST surface,
// converted at generate time from the Swagger 2.0 document
// protoc-gen-openapiv2 writes (vulnscan.swagger.json).
//
//go:embed vulnscan.openapi.json
var JSON []byte
