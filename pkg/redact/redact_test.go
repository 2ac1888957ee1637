package redact

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://example.com/path", "https://example.com/path"},
		{"https://user:pass@example.com/a?token=s3cret#frag", "https://REDACTED@example.com/a?REDACTED"},
		{"https://example.com/?", "https://example.com/"},
		{"http://[::1]:8080/x?api_key=1", "http://[::1]:8080/x?REDACTED"},
		{"::not a url", "REDACTED"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got := URL(tc.in)
			require.Equal(t, tc.want, got)
			require.NotContains(t, got, "s3cret")
			require.NotContains(t, got, "pass")
		})
	}
}

func TestSecret(t *testing.T) {
	t.Parallel()
	require.Equal(t, "https://hooks.slack.com/REDACTED", Secret("https://hooks.slack.com/services/T0/B0/XXXXsecret"))
	require.Equal(t, "REDACTED", Secret("not a url"))
}

func TestErrorHidesURLOfFailedRequest(t *testing.T) {
	t.Parallel()
	hook := "http://127.0.0.1:1/services/T0/B0/XXXXsecret"
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, hook, nil)
	require.NoError(t, err)
	_, err = http.DefaultClient.Do(req)
	require.Error(t, err)
	require.Contains(t, err.Error(), "XXXXsecret", "the standard library quotes the URL")
	wrapped := fmt.Errorf("deliver: %w", err)
	got := Error(wrapped, Secret)
	require.NotContains(t, got, "XXXXsecret")
	require.True(t, strings.HasPrefix(got, "deliver: Post \"http://127.0.0.1:1/REDACTED\""), got)

	got = Error(errors.New("receiver "+hook+" answered 500"), Secret, hook)
	require.NotContains(t, got, "XXXXsecret")
	require.Empty(t, Error(nil, URL))
}
