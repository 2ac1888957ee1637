package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAddressClassesRefused(t *testing.T) {
	t.Parallel()
	g, err := New(nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		class, ip string
		public    bool
	}{
		{"private 10/8", "10.1.2.3", false},
		{"private 172.16/12", "172.31.255.254", false},
		{"just outside 172.16/12", "172.32.0.1", true},
		{"private 192.168/16", "192.168.1.1", false},
		{"loopback", "127.0.0.1", false},
		{"loopback far end", "127.255.255.254", false},
		{"this network", "0.0.0.0", false},
		{"link-local / metadata", "169.254.169.254", false},
		{"CGNAT low", "100.64.0.1", false},
		{"CGNAT high", "100.127.255.254", false},
		{"just above CGNAT", "100.128.0.1", true},
		{"just below CGNAT", "100.63.255.255", true},
		{"benchmarking", "198.18.0.1", false},
		{"documentation", "203.0.113.7", false},
		{"multicast", "224.0.0.251", false},
		{"reserved", "240.0.0.1", false},
		{"broadcast", "255.255.255.255", false},
		{"public v4", "8.8.8.8", true},
		{"IPv6 loopback", "::1", false},
		{"IPv6 unspecified", "::", false},
		{"IPv6 link-local", "fe80::1", false},
		{"IPv6 link-local with zone", "fe80::1%eth0", false},
		{"IPv6 ULA fc", "fc00::1", false},
		{"IPv6 ULA fd", "fd12:3456:789a::1", false},
		{"IPv6 site-local", "fec0::1", false},
		{"IPv6 multicast", "ff02::1", false},
		{"IPv6 documentation", "2001:db8::1", false},
		{"NAT64 of private", "64:ff9b::a00:1", false},
		{"6to4", "2002:a00:1::1", false},
		{"mapped private", "::ffff:10.0.0.1", false},
		{"mapped loopback", "::ffff:127.0.0.1", false},
		{"mapped metadata", "::ffff:169.254.169.254", false},
		{"mapped CGNAT", "::ffff:100.64.0.1", false},
		{"mapped public", "::ffff:8.8.8.8", true},
		{"public v6", "2606:4700:4700::1111", true},
	} {
		t.Run(tc.class, func(t *testing.T) {
			ip, err := netip.ParseAddr(tc.ip)
			require.NoError(t, err)
			require.Equal(t, tc.public, IsPublic(ip), "IsPublic")
			require.Equal(t, tc.public, g.Allowed(ip), "Allowed")
			host := tc.ip
			if ip.Is6() {
				host = "[" + tc.ip + "]"
			}
			err = g.CheckHost(context.Background(), host)
			if tc.public {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrBlocked)
			}
			ctlErr := g.control("tcp", netip.AddrPortFrom(ip.WithZone(""), 443).String(), nil)
			if tc.public {
				require.NoError(t, ctlErr)
			} else {
				require.ErrorIs(t, ctlErr, ErrBlocked)
			}
		})
	}
	require.False(t, IsPublic(netip.Addr{}), "the zero address is not public")
}

func TestAllowedCIDRsExemptOnlyThemselves(t *testing.T) {
	t.Parallel()
	g, err := New([]string{" 10.20.0.0/16 ", "fd00::/8", "100.64.1.7/16"})
	require.NoError(t, err)
	for _, tc := range []struct {
		ip   string
		want bool
	}{
		{"10.20.3.4", true},
		{"::ffff:10.20.3.4", true},
		{"10.21.0.1", false},
		{"fd00::5", true},
		{"fc00::5", false},
		{"100.64.200.1", true}, // the prefix is masked to 100.64.0.0/16
		{"100.65.0.1", false},
		{"127.0.0.1", false},
	} {
		require.Equal(t, tc.want, g.Allowed(netip.MustParseAddr(tc.ip)), tc.ip)
	}

	for _, bad := range []string{"10.0.0.0", "10.0.0.0/33", "not-a-cidr", ""} {
		_, err := New([]string{bad})
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "allowed private CIDR")
	}
}

func TestControlRefusesUnparsableAddress(t *testing.T) {
	t.Parallel()
	g, err := New([]string{"0.0.0.0/0"})
	require.NoError(t, err)
	var raw syscall.RawConn
	require.ErrorIs(t, g.control("tcp", "example.com:443", raw), ErrBlocked)
	require.NoError(t, g.control("tcp", "10.0.0.1:443", raw))
}

// offline returns a guard whose resolver never reaches a DNS server.
func offline(t *testing.T, allowed ...string) *Guard {
	t.Helper()
	g, err := New(allowed)
	require.NoError(t, err)
	g.resolver = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS in tests")
	}}
	return g
}

func TestCheckHostNames(t *testing.T) {
	t.Parallel()
	g := offline(t)
	for _, tc := range []struct {
		host    string
		blocked bool
		wantMsg string
	}{
		{host: "LOCALHOST", blocked: true},
		{host: "printer.local", blocked: true},
		{host: "metadata.google.internal", blocked: true},
		{host: "db.internal.", blocked: true},
		{host: "127.0.0.1.", blocked: true},
		{host: "[::ffff:7f00:1]", blocked: true},
		{host: "017700000001", blocked: true}, // octal 127.0.0.1
		{host: "repo.example.invalid", wantMsg: "cannot resolve repo.example.invalid"},
	} {
		t.Run(tc.host, func(t *testing.T) {
			err := g.CheckHost(context.Background(), tc.host)
			require.Error(t, err)
			if tc.blocked {
				require.ErrorIs(t, err, ErrBlocked)
				return
			}
			require.NotErrorIs(t, err, ErrBlocked)
			require.EqualError(t, err, tc.wantMsg)
		})
	}
	require.False(t, offline(t, "127.0.0.0/8").Exempt(context.Background(), "repo.example.invalid"),
		"a name that does not resolve is never exempt")
}

func TestParseIPLiteralForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want string // empty: not an IP literal
	}{
		{"0x7f000001", "127.0.0.1"},
		{"0X7F.0.0.1", "127.0.0.1"},
		{"0x", "0.0.0.0"},
		{"10.0x10000", "10.1.0.0"},
		{"192.168.0x101", "192.168.1.1"},
		{"127.0.0.1%eth0", "127.0.0.1"},
		{"1.2.3.256", ""},
		{"256.1.1.1", ""},
		{"1.2.3.4.5", ""},
		{"1..2", ""},
		{"08.0.0.1", ""}, // 8 is not an octal digit
		{"4294967296", ""},
		{"example.com", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			ip, ok := ParseIPLiteral(tc.in)
			if tc.want == "" {
				require.False(t, ok, "parsed as %s", ip)
				return
			}
			require.True(t, ok)
			require.Equal(t, tc.want, ip.String())
		})
	}
}

func TestClientRedirectPolicy(t *testing.T) {
	t.Parallel()
	final := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("done")) }))
	t.Cleanup(final.Close)
	// /hop/N redirects N times before reaching the final server.
	var hops *httptest.Server
	hops = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/hop/%d", &n); err != nil {
			http.NotFound(w, r)
			return
		}
		next := final.URL
		if n > 1 {
			next = fmt.Sprintf("%s/hop/%d", hops.URL, n-1)
		}
		http.Redirect(w, r, next, http.StatusFound)
	}))
	t.Cleanup(hops.Close)
	toFile := httptest.NewServer(http.RedirectHandler("file:///etc/passwd", http.StatusFound))
	t.Cleanup(toFile.Close)

	g, err := New([]string{"127.0.0.0/8"})
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		url     string
		max     int
		wantErr string
	}{
		{name: "within the limit", url: hops.URL + "/hop/3", max: 3},
		{name: "over the limit", url: hops.URL + "/hop/3", max: 2, wantErr: "stopped after 2 redirects"},
		{name: "no redirects allowed", url: hops.URL + "/hop/1", max: 0, wantErr: "stopped after 0 redirects"},
		{name: "unsupported scheme", url: toFile.URL, max: 5, wantErr: `redirect to unsupported scheme "file"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := g.Client(30*time.Second, tc.max).Get(tc.url)
			if tc.wantErr != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			defer func() { _ = resp.Body.Close() }()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.True(t, strings.HasPrefix(resp.Request.URL.String(), final.URL))
		})
	}

	tr := g.Transport()
	require.Nil(t, tr.Proxy, "proxies are ignored so that the real peer is checked")
}
