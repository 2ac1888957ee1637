package netguard

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestIsPublic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ip     string
		public bool
	}{
		{"8.8.8.8", true},
		{"140.82.112.3", true},
		{"2606:4700::1111", true},
		{"127.0.0.1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"100.64.0.1", false},
		{"0.0.0.0", false},
		{"224.0.0.1", false},
		{"255.255.255.255", false},
		{"::1", false},
		{"::", false},
		{"fe80::1", false},
		{"fd00::1", false},
		{"ff02::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:8.8.8.8", true},
		{"64:ff9b::7f00:1", false},
		{"2002:7f00:1::", false},
		{"2001:db8::1", false},
	}
	for _, tc := range tests {
		t.Run(tc.ip, func(t *testing.T) {
			require.Equal(t, tc.public, IsPublic(netip.MustParseAddr(tc.ip)))
		})
	}
}

func TestParseIPLiteral(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"10.1", "10.0.0.1"},
		{"::ffff:10.0.0.1", "::ffff:10.0.0.1"},
		{"example.com", ""},
		{"256.1.1.1", ""},
		{"1.2.3.4.5", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			ip, ok := ParseIPLiteral(tc.in)
			if tc.want == "" {
				require.False(t, ok)
				return
			}
			require.True(t, ok)
			require.Equal(t, tc.want, ip.String())
		})
	}
}

func TestCheckHost(t *testing.T) {
	t.Parallel()
	g, err := New(nil)
	require.NoError(t, err)
	for _, h := range []string{"127.0.0.1", "[::1]", "2130706433", "0x7f.1", "localhost", "foo.localhost", "169.254.169.254", "[::ffff:169.254.169.254]", "metadata.internal"} {
		require.ErrorIs(t, g.CheckHost(context.Background(), h), ErrBlocked, h)
	}
	require.NoError(t, g.CheckHost(context.Background(), "93.184.216.34"))

	allowed, err := New([]string{"127.0.0.0/8"})
	require.NoError(t, err)
	require.NoError(t, allowed.CheckHost(context.Background(), "127.0.0.1"))
	require.NoError(t, allowed.CheckHost(context.Background(), "[::ffff:127.0.0.1]"))
	require.ErrorIs(t, allowed.CheckHost(context.Background(), "10.0.0.1"), ErrBlocked)
}

func TestClientRefusesLoopbackAndRedirects(t *testing.T) {
	t.Parallel()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("secret")) }))
	t.Cleanup(target.Close)
	redirector := httptest.NewServer(http.RedirectHandler(strings.Replace(target.URL, "127.0.0.1", "[::1]", 1), http.StatusFound))
	t.Cleanup(redirector.Close)

	blocked, err := New(nil)
	require.NoError(t, err)
	_, err = blocked.Client(5*time.Second, 3).Get(target.URL)
	require.True(t, errors.Is(err, ErrBlocked), "got %v", err)

	// Allowing only 127.0.0.0/8 still blocks the redirect to [::1].
	allowed, err := New([]string{"127.0.0.0/8"})
	require.NoError(t, err)
	resp, err := allowed.Client(5*time.Second, 3).Get(target.URL)
	require.NoError(t, err)
	_ = resp.Body.Close()
	_, err = allowed.Client(5*time.Second, 3).Get(redirector.URL)
	require.True(t, errors.Is(err, ErrBlocked), "got %v", err)
}

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "ftp://x.com", "https://", "https://user:pw@x.com/", "/relative", "https://x.com:99999/", "https://x.com/a b", "javascript:alert(1)"} {
		_, err := ParseURL(bad, "http", "https")
		require.Error(t, err, bad)
	}
	u, err := ParseURL("https://github.com/a/b.git", "https")
	require.NoError(t, err)
	require.Equal(t, "github.com", u.Hostname())
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://example.com/", "http://127.0.0.1:8080/x", "https://[::ffff:10.0.0.1]/", "https://0x7f.1/", "http://2130706433/", "https://a@b/"} {
		f.Add(s)
	}
	g, err := New(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := ParseURL(raw, "http", "https")
		if err != nil {
			return
		}
		host := u.Hostname()
		if ip, ok := ParseIPLiteral(host); ok {
			// Never resolve names here: fuzzing must not touch the network.
			if err := g.CheckHost(context.Background(), host); err == nil && !IsPublic(ip) {
				t.Fatalf("non-public literal %q (%s) accepted", host, ip)
			}
		}
	})
}

func TestExempt(t *testing.T) {
	t.Parallel()
	none, err := New(nil)
	require.NoError(t, err)
	loop, err := New([]string{"127.0.0.0/8"})
	require.NoError(t, err)
	for _, c := range []struct {
		g    *Guard
		host string
		want bool
	}{
		{none, "127.0.0.1", false},
		{loop, "127.0.0.1", true},
		{loop, "[::1]", false},
		{loop, "10.0.0.1", false},
		{loop, "8.8.8.8", false},
		{loop, "0x7f.1", true},
	} {
		require.Equal(t, c.want, c.g.Exempt(context.Background(), c.host), c.host)
	}
}
