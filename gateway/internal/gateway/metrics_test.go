package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/proto/gen/openapi"
)

func TestSplitPathAsStringsSplit(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", "/", "//", "/v1/credits", "v1/credits/", "/v1//findings/", "/v1/scans/abc/findings/export",
		strings.Repeat("/a", 40), "/é/日本/"} {
		var buf [16]string
		require.Equal(t, strings.Split(strings.Trim(p, "/"), "/"), splitPath(p, buf[:0]), "%q", p)
	}
}

func TestRouteTableMatch(t *testing.T) {
	t.Parallel()
	routes, err := newRouteTable(openapi.JSON, map[string][]string{uploadPath: {http.MethodPost}})
	require.NoError(t, err)
	tests := []struct {
		method, path, route string
		allowed             bool
	}{
		{http.MethodGet, "/v1/credits", "/v1/credits", true},
		{http.MethodHead, "/v1/credits/", "/v1/credits", true},
		{http.MethodGet, "/v1/scans/7d3c1a52/findings", "/v1/scans/{id}/findings", true},
		{http.MethodDelete, "/v1/credits", "/v1/credits", false},
		{http.MethodGet, "/v1/nope/x/y/z", unmatchedRoute, false},
		{http.MethodGet, "/v1/scans//findings", unmatchedRoute, false},
	}
	for _, tc := range tests {
		route, allowed := routes.match(tc.method, tc.path)
		require.Equal(t, tc.route, route, "%s %s", tc.method, tc.path)
		require.Equal(t, tc.allowed, allowed, "%s %s", tc.method, tc.path)
	}
}
