// Package netguard keeps outbound connections (repository clones, live target
// probes, integration webhooks) away from non-public networks. Addresses are
// checked after DNS resolution, on the address actually dialled, for every
// connection including those of redirects, so DNS rebinding and redirects to
// internal hosts are refused alike. CIDRs listed in
// VULNSCAN_ALLOWED_PRIVATE_CIDRS are exempt (tests use 127.0.0.0/8).
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrBlocked is returned for an address outside the public internet.
var ErrBlocked = errors.New("address is not public")

// Guard decides which addresses may be reached.
type Guard struct {
	allowed  []netip.Prefix
	resolver *net.Resolver
}

// New returns a Guard exempting the given CIDRs.
func New(allowedCIDRs []string) (*Guard, error) {
	g := &Guard{resolver: net.DefaultResolver}
	for _, c := range allowedCIDRs {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return nil, fmt.Errorf("allowed private CIDR %q: %w", c, err)
		}
		g.allowed = append(g.allowed, p.Masked())
	}
	return g, nil
}

var nonPublic = mustPrefixes(
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
	"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
	"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
	"::/128", "::1/128", "::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23",
	"2001:db8::/32", "2002::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Allowed reports whether ip may be connected to.
func (g *Guard) Allowed(ip netip.Addr) bool {
	ip = ip.WithZone("")
	for _, p := range g.allowed {
		if p.Contains(ip) || (ip.Is4In6() && p.Contains(ip.Unmap())) {
			return true
		}
	}
	return IsPublic(ip)
}

// IsPublic reports whether ip is a global unicast address of the public
// internet. IPv4-mapped IPv6 addresses are judged by their IPv4 address.
func IsPublic(ip netip.Addr) bool {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	if !ip.IsValid() || !ip.IsGlobalUnicast() || ip.IsPrivate() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// control runs on every socket right before connect, with the resolved address.
func (g *Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrBlocked, address)
	}
	if !g.Allowed(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrBlocked, ap.Addr())
	}
	return nil
}

// Dialer returns a dialer that refuses non-public addresses.
func (g *Guard) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: g.control}
}

// Transport returns an HTTP transport whose connections are all checked. It
// ignores proxy settings so that the check applies to the real peer.
func (g *Guard) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           g.Dialer(10 * time.Second).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		IdleConnTimeout:       60 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
	}
}

// Client returns an HTTP client over Transport that follows at most
// maxRedirects redirects, only to http or https URLs.
func (g *Guard) Client(timeout time.Duration, maxRedirects int) *http.Client {
	return &http.Client{
		Transport: g.Transport(),
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to unsupported scheme %q", req.URL.Scheme)
			}
			return nil
		},
	}
}

// ErrHost names what is wrong with a URL without a host, for API messages.
var ErrHost = errors.New("must name a host")

// ParseURL parses raw as an absolute URL with one of the schemes and a host,
// without credentials.
func ParseURL(raw string, schemes ...string) (*url.URL, error) {
	if len(raw) > 2048 || strings.ContainsAny(raw, " \t\r\n\x00\\") {
		return nil, errors.New("is not a valid URL")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return nil, errors.New("is not a valid absolute URL")
	}
	ok := false
	for _, s := range schemes {
		ok = ok || u.Scheme == s
	}
	if !ok {
		return nil, fmt.Errorf("must use %s", strings.Join(schemes, " or "))
	}
	if u.Hostname() == "" {
		return nil, ErrHost
	}
	if u.User != nil {
		return nil, errors.New("must not contain credentials")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, errors.New("has an invalid port")
		}
	}
	return u, nil
}

// CheckHost resolves host and returns ErrBlocked when any of its addresses
// is not allowed. IP literals in every notation that resolvers and browsers
// accept (dotted, decimal, octal, hexadecimal, shortened, IPv6, IPv4-mapped)
// are judged as the address they denote.
func (g *Guard) CheckHost(ctx context.Context, host string) error {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if ip, ok := ParseIPLiteral(host); ok {
		if !g.Allowed(ip) {
			return fmt.Errorf("%w: %s", ErrBlocked, ip)
		}
		return nil
	}
	lower := strings.ToLower(host)
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") || strings.HasSuffix(lower, ".local") || strings.HasSuffix(lower, ".internal") {
		return fmt.Errorf("%w: %s", ErrBlocked, host)
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := g.resolver.LookupNetIP(rctx, "ip", host)
	if err != nil {
		return fmt.Errorf("cannot resolve %s", host)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("cannot resolve %s", host)
	}
	for _, a := range addrs {
		if !g.Allowed(a) {
			return fmt.Errorf("%w: %s resolves to %s", ErrBlocked, host, a.Unmap())
		}
	}
	return nil
}

// Exempt reports whether host (an IP literal or a name) denotes only
// addresses inside the exempted CIDRs: a test or development receiver that
// may be reached where public ones are required. It is false when nothing
// is exempted or host does not resolve.
func (g *Guard) Exempt(ctx context.Context, host string) bool {
	if len(g.allowed) == 0 {
		return false
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	var addrs []netip.Addr
	if ip, ok := ParseIPLiteral(host); ok {
		addrs = []netip.Addr{ip}
	} else {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var err error
		if addrs, err = g.resolver.LookupNetIP(rctx, "ip", host); err != nil {
			return false
		}
	}
	for _, a := range addrs {
		a = a.WithZone("")
		in := false
		for _, p := range g.allowed {
			in = in || p.Contains(a) || (a.Is4In6() && p.Contains(a.Unmap()))
		}
		if !in {
			return false
		}
	}
	return len(addrs) > 0
}

// ParseIPLiteral parses host as an IP address, accepting the legacy IPv4
// forms of inet_aton (e.g. 2130706433, 0x7f.1, 0177.0.0.1, 127.1).
func ParseIPLiteral(host string) (netip.Addr, bool) {
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i]
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip, true
	}
	parts := strings.Split(host, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseInetAtonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	var v uint64
	last := len(nums) - 1
	for i := 0; i < last; i++ {
		if nums[i] > 255 {
			return netip.Addr{}, false
		}
		v |= nums[i] << (24 - 8*uint(i))
	}
	if nums[last] >= 1<<(8*uint(4-last)) {
		return netip.Addr{}, false
	}
	v |= nums[last]
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseInetAtonPart(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	n, err := strconv.ParseUint(p, base, 32)
	if err != nil {
		return 0, false
	}
	return n, true
}
