package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

// do sends a request with the API key (none when "") and, when hdr holds
// header name and value pairs, those headers (body is then a string or nil).
func do(t *testing.T, method, path, key string, body any, hdr ...string) systest.Response {
	t.Helper()
	if len(hdr) == 0 {
		r, err := sys.Do(method, path, key, body)
		require.NoError(t, err)
		return r
	}
	var rd *strings.Reader
	if s, ok := body.(string); ok {
		rd = strings.NewReader(s)
	}
	req, err := http.NewRequest(method, sys.BaseURL+path, nil)
	require.NoError(t, err)
	if rd != nil {
		req, err = http.NewRequest(method, sys.BaseURL+path, rd)
		require.NoError(t, err)
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return systest.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}
