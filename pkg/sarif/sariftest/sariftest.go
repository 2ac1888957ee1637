// Package sariftest validates SARIF logs in tests against the SARIF 2.1.0
// JSON schema (release rtm.5, the schema of the OASIS standard), vendored
// from the MIT-licensed npm package @microsoft/jest-sarif 1.0.0-beta.0
// (lib/schemas/sarif-2.1.0-rtm.5.json). The writer's unit tests, the
// findings service's export tests and the command-line client's tests all
// validate against this one file.
package sariftest

import (
	"bytes"
	_ "embed"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

//go:embed sarif-schema-2.1.0.json
var schemaJSON []byte

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	// Formats are asserted: code scanning's upload checks them (an
	// artifactLocation.uri that is not a uri-reference fails the log).
	c.AssertFormat()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("sarif-schema-2.1.0.json")
})

// Schema returns the compiled SARIF 2.1.0 schema.
func Schema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	s, err := compiled()
	require.NoError(t, err)
	return s
}

// Validate fails the test unless log is a SARIF 2.1.0 document.
func Validate(t testing.TB, log []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(log))
	require.NoError(t, err)
	require.NoError(t, Schema(t).Validate(inst), "the log validates against SARIF 2.1.0")
}
