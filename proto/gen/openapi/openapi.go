// Package openapi embeds the OpenAPI document generated from the protos'
// HTTP rules, served by the gateway at GET /openapi.json.
package openapi

import _ "embed"

// JSON is the merged OpenAPI (Swagger 2.0) document of the /v1 REST surface.
//
//go:embed vulnscan.swagger.json
var JSON []byte
