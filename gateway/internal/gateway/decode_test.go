package gateway

import (
	"io"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

func TestBodyMarshalerNamesWrongJSONTypes(t *testing.T) {
	m := bodyMarshaler{&runtime.JSONPb{UnmarshalOptions: protojson.UnmarshalOptions{}}}
	decode := func(body string, v any) error { return m.NewDecoder(strings.NewReader(body)).Decode(v) }
	for _, tc := range []struct {
		name, body, want string
		newMsg           func() any
	}{
		{"string for array", `{"repos":"x"}`, "repos: expected an array", func() any { return &estimationv1.CreateCostEstimationRequest{} }},
		{"number in array of objects", `{"repos":[1]}`, "repos[0]: expected an object", func() any { return &estimationv1.CreateCostEstimationRequest{} }},
		{"object for array", `{"repos":{}}`, "repos: expected an array", func() any { return &estimationv1.CreateCostEstimationRequest{} }},
		{"nested string field", `{"repos":[{"repo_url":5}]}`, "repos[0].repo_url: expected a string", func() any { return &estimationv1.CreateCostEstimationRequest{} }},
		{"number for string", `{"name":5,"repos":[]}`, "name: expected a string", func() any { return &estimationv1.CreateCostEstimationRequest{} }},
		{"optional string", `{"severity":5}`, "severity: expected a string", func() any { return &findingsv1.UpdateFindingRequest{} }},
		{"bool for string list", `{"name":"k","scopes":true}`, "scopes: expected an array", func() any { return &authv1.CreateAPIKeyRequest{} }},
		{"number in string list", `{"name":"k","scopes":[1]}`, "scopes[0]: expected a string", func() any { return &authv1.CreateAPIKeyRequest{} }},
		{"top level array", `[1]`, "Request body: expected a JSON object", func() any { return &authv1.CreateAPIKeyRequest{} }},
		// Not type errors: the decoder's own message stays.
		{"unknown field", `{"name":"k","surprise":1}`, `unknown field "surprise"`, func() any { return &authv1.CreateAPIKeyRequest{} }},
		{"syntax", `{"name":`, "unexpected EOF", func() any { return &authv1.CreateAPIKeyRequest{} }},
		// One value, then more: refused, not the rest ignored.
		{"a second value", `{"state":"resolved"} {"state":"open"}`, "invalid character after top-level value", func() any { return &findingsv1.UpdateFindingRequest{} }},
		{"trailing garbage", `{"state":"resolved"}x`, "invalid character after top-level value", func() any { return &findingsv1.UpdateFindingRequest{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := decode(tc.body, tc.newMsg())
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("valid body decodes", func(t *testing.T) {
		var req estimationv1.CreateCostEstimationRequest
		require.NoError(t, decode(`{"name":"n","repos":[{"repo_url":"https://x"}]}`, &req))
		require.Equal(t, "n", req.GetName())
		require.Equal(t, "https://x", req.GetRepos()[0].GetRepoUrl())
	})
	t.Run("trailing whitespace is fine", func(t *testing.T) {
		var req findingsv1.UpdateFindingRequest
		require.NoError(t, decode("{\"state\":\"resolved\"}\n\t ", &req))
		require.Equal(t, "resolved", req.GetState())
	})
	t.Run("empty body is EOF", func(t *testing.T) {
		require.ErrorIs(t, decode("  ", &authv1.CreateAPIKeyRequest{}), io.EOF)
	})
}
