// Package live probes a running web application: a bounded, polite crawl of
// one origin through the caller's HTTP client (which refuses non-public
// addresses), followed by checks for missing security headers, cookie flags,
// exposed files, directory listings, reflected input, open redirects,
// permissive CORS, verbose errors and weak TLS. Every finding can be
// reproduced with a second request.
package live

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
)

// Limits bound one probe.
type Limits struct {
	MaxPages    int           // pages crawled
	MaxRequests int           // requests in total, checks included
	Timeout     time.Duration // whole probe
	Interval    time.Duration // minimum gap between requests
	MaxBody     int64         // bytes read per response
}

// DefaultLimits is polite towards production sites.
var DefaultLimits = Limits{MaxPages: 20, MaxRequests: 120, Timeout: 2 * time.Minute, Interval: 100 * time.Millisecond, MaxBody: 512 << 10}

// Header is one header sent with every request.
type Header struct{ Name, Value string }

var headerName = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`)

// ParseAuthHeaders extracts "Header: value" lines from auth instructions. Other
// lines are left for human testers.
func ParseAuthHeaders(instructions string) []Header {
	var out []Header
	for _, line := range strings.Split(instructions, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" || strings.Contains(k, " ") || !headerName.MatchString(k) || strings.ContainsAny(v, "\r\n") {
			continue
		}
		if strings.EqualFold(k, "http") || strings.EqualFold(k, "https") {
			continue
		}
		out = append(out, Header{Name: http.CanonicalHeaderKey(k), Value: v})
	}
	return out
}

// SafeURL drops user info, query and fragment, for logs.
func SafeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "invalid-url"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// Result of one probe.
type Result struct {
	Findings []finding.Finding
	Requests int
}

type prober struct {
	client  *http.Client
	origin  *url.URL
	headers []Header
	lim     Limits
	mu      sync.Mutex
	reqs    int
	last    time.Time
	ctx     context.Context
}

type response struct {
	status int
	header http.Header
	body   string
	tls    *tls.ConnectionState
	req    string
}

var errBudget = errors.New("request budget exhausted")

func (p *prober) do(method, target string, extra http.Header) (*response, error) {
	p.mu.Lock()
	if p.reqs >= p.lim.MaxRequests {
		p.mu.Unlock()
		return nil, errBudget
	}
	p.reqs++
	wait := time.Until(p.last.Add(p.lim.Interval))
	p.last = time.Now().Add(max(wait, 0))
	p.mu.Unlock()
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-p.ctx.Done():
			t.Stop()
			return nil, p.ctx.Err()
		case <-t.C:
		}
	}
	u, err := url.Parse(target)
	if err != nil || !sameOrigin(p.origin, u) {
		return nil, fmt.Errorf("refusing off-origin request")
	}
	req, err := http.NewRequestWithContext(p.ctx, method, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "vulnscan-probe/1")
	for _, h := range p.headers {
		req.Header.Set(h.Name, h.Value)
	}
	for k, vs := range extra {
		for _, v := range vs {
			req.Header.Set(k, v)
		}
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, p.lim.MaxBody))
	return &response{status: resp.StatusCode, header: resp.Header, body: string(body), tls: resp.TLS, req: p.describe(method, u, extra)}, nil
}

// describe renders the request for a proof of concept; authentication header
// values are never included.
func (p *prober) describe(method string, u *url.URL, extra http.Header) string {
	var b strings.Builder
	path := u.RequestURI()
	fmt.Fprintf(&b, "%s %s HTTP/1.1\nHost: %s\n", method, path, u.Host)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, extra.Get(k))
	}
	for _, h := range p.headers {
		fmt.Fprintf(&b, "%s: [redacted]\n", h.Name)
	}
	return b.String()
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

// Probe crawls target and runs the checks. The client must refuse non-public
// addresses; Probe never follows redirects off the origin.
func Probe(ctx context.Context, client *http.Client, target string, headers []Header, lim Limits) (Result, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Result{}, fmt.Errorf("invalid target URL")
	}
	if lim.MaxPages <= 0 {
		lim = DefaultLimits
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	p := &prober{client: &c, origin: &url.URL{Scheme: u.Scheme, Host: u.Host}, headers: headers, lim: lim, ctx: ctx}
	var out []finding.Finding
	add := func(f *finding.Finding) {
		if f != nil {
			f.AffectedFile = SafeURL(f.AffectedFile)
			f.Language = "http"
			out = append(out, *f)
		}
	}
	root, err := p.do(http.MethodGet, target, nil)
	if err != nil {
		return Result{Requests: p.reqs}, err
	}
	add(p.checkHeaders(target, root))
	for _, f := range p.checkCookies(target, root) {
		add(f)
	}
	add(p.checkTLS(target, root))
	add(p.checkCORS(target))
	pages := p.crawl(target, root)
	for _, pg := range pages {
		add(p.checkListing(pg.url, pg.resp))
	}
	for _, f := range p.checkExposedFiles() {
		add(f)
	}
	for _, pg := range pages {
		for _, f := range p.checkParams(pg.url) {
			add(f)
		}
	}
	add(p.checkVerboseErrors())
	err = ctx.Err()
	out = dedupe(out)
	// The verification stage reproduces each finding with one more request,
	// after the probe's own deadline.
	p.mu.Lock()
	p.ctx = parent
	p.lim.MaxRequests = p.reqs + len(out)
	p.mu.Unlock()
	return Result{Findings: out, Requests: p.reqs}, err
}

func dedupe(in []finding.Finding) []finding.Finding {
	seen := map[string]bool{}
	var out []finding.Finding
	for _, f := range in {
		k := f.RuleID + "\x00" + f.FingerprintKey
		if !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}

type page struct {
	url  string
	resp *response
}

var hrefRe = regexp.MustCompile(`(?i)(?:href|src|action)\s*=\s*["']([^"'#]+)`)

func (p *prober) crawl(start string, first *response) []page {
	pages := []page{{start, first}}
	seen := map[string]bool{normalize(start): true}
	for i := 0; i < len(pages) && len(pages) < p.lim.MaxPages; i++ {
		base, _ := url.Parse(pages[i].url)
		for _, m := range hrefRe.FindAllStringSubmatch(pages[i].resp.body, 200) {
			ref, err := url.Parse(strings.TrimSpace(m[1]))
			if err != nil {
				continue
			}
			abs := base.ResolveReference(ref)
			abs.Fragment = ""
			if !sameOrigin(p.origin, abs) || seen[normalize(abs.String())] || staticAsset(abs.Path) {
				continue
			}
			seen[normalize(abs.String())] = true
			r, err := p.do(http.MethodGet, abs.String(), nil)
			if err != nil {
				if errors.Is(err, errBudget) || p.ctx.Err() != nil {
					return pages
				}
				continue
			}
			pages = append(pages, page{abs.String(), r})
			if len(pages) >= p.lim.MaxPages {
				break
			}
		}
	}
	return pages
}

func normalize(s string) string { return strings.TrimSuffix(s, "/") }

var staticRe = regexp.MustCompile(`(?i)\.(png|jpe?g|gif|svg|ico|css|woff2?|ttf|mp4|pdf|zip|js)$`)

func staticAsset(p string) bool { return staticRe.MatchString(p) }

func nonce() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func excerpt(r *response, needle string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\n", r.status, http.StatusText(r.status))
	keys := make([]string, 0, len(r.header))
	for k := range r.header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.EqualFold(k, "Set-Cookie") {
			for _, v := range r.header.Values(k) {
				name, _, _ := strings.Cut(v, "=")
				attrs := ""
				if i := strings.Index(v, ";"); i >= 0 {
					attrs = v[i:]
				}
				fmt.Fprintf(&b, "%s: %s=[value]%s\n", k, name, attrs)
			}
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(r.header.Values(k), ", "))
	}
	if needle != "" {
		if i := strings.Index(r.body, needle); i >= 0 {
			lo, hi := max(i-120, 0), min(i+len(needle)+120, len(r.body))
			fmt.Fprintf(&b, "\n…%s…\n", r.body[lo:hi])
		}
	}
	return b.String()
}

func poc(r *response, needle string) *string {
	s := "Request:\n" + r.req + "\nResponse:\n" + excerpt(r, needle)
	return &s
}

// rulesYAML lists the metadata of every check.
//
//go:embed rules.yaml
var rulesYAML []byte

// catalog holds the metadata of every check, by rule ID.
var catalog = finding.MustLoadRules(rulesYAML)

// liveFinding is a finding of the rule id on target: the request line is
// its code and the exchange its proof of concept.
func liveFinding(id, target, key string, resp *response, needle string, reproduce func() bool) *finding.Finding {
	f := catalog.Get(id).Finding(target, "live")
	f.AffectedCode = strings.TrimSpace(strings.SplitN(resp.req, "\n", 2)[0])
	f.ProofOfConcept = poc(resp, needle)
	f.FingerprintKey, f.Reproduce = key, reproduce
	return &f
}

func (p *prober) checkHeaders(target string, r *response) *finding.Finding {
	var missing []string
	h := r.header
	if h.Get("Content-Security-Policy") == "" {
		missing = append(missing, "Content-Security-Policy")
	}
	if !strings.EqualFold(h.Get("X-Content-Type-Options"), "nosniff") {
		missing = append(missing, "X-Content-Type-Options")
	}
	if h.Get("X-Frame-Options") == "" && !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors") {
		missing = append(missing, "X-Frame-Options")
	}
	if p.origin.Scheme == "https" && h.Get("Strict-Transport-Security") == "" {
		missing = append(missing, "Strict-Transport-Security")
	}
	if len(missing) == 0 || !strings.Contains(h.Get("Content-Type"), "html") {
		return nil
	}
	f := liveFinding("live.missing-security-headers", target, "headers:"+strings.Join(missing, ","), r, "", func() bool {
		r2, err := p.do(http.MethodGet, target, nil)
		return err == nil && r2.header.Get("Content-Security-Policy") == h.Get("Content-Security-Policy")
	})
	f.Description += " Missing here: " + strings.Join(missing, ", ") + "."
	return f
}

func (p *prober) checkCookies(target string, r *response) []*finding.Finding {
	var out []*finding.Finding
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		var miss []string
		if !c.HttpOnly {
			miss = append(miss, "HttpOnly")
		}
		if !c.Secure && p.origin.Scheme == "https" {
			miss = append(miss, "Secure")
		}
		if !sameSiteSet(c) {
			miss = append(miss, "SameSite")
		}
		if len(miss) == 0 {
			continue
		}
		name := c.Name
		f := liveFinding("live.cookie-flags", target, "cookie:"+name, r, "", func() bool {
			r2, err := p.do(http.MethodGet, target, nil)
			if err != nil {
				return false
			}
			for _, c2 := range (&http.Response{Header: r2.header}).Cookies() {
				if c2.Name == name && (!c2.HttpOnly || !sameSiteSet(c2) || (!c2.Secure && p.origin.Scheme == "https")) {
					return true
				}
			}
			return false
		})
		f.Title = fmt.Sprintf("Cookie %q without %s", name, strings.Join(miss, ", "))
		out = append(out, f)
	}
	return out
}

// sameSiteSet reports a cookie declaring a SameSite policy. A cookie with
// no SameSite attribute parses as the zero mode and one with an unknown
// value as SameSiteDefaultMode: browsers apply their own default to both.
func sameSiteSet(c *http.Cookie) bool {
	switch c.SameSite {
	case http.SameSiteLaxMode, http.SameSiteStrictMode, http.SameSiteNoneMode:
		return true
	}
	return false
}

func (p *prober) checkTLS(target string, r *response) *finding.Finding {
	if p.origin.Scheme == "https" {
		if r.tls != nil && r.tls.Version < tls.VersionTLS12 {
			return liveFinding("live.weak-tls", target, "tls-version", r, "", func() bool { return true })
		}
		return nil
	}
	// plain HTTP: fine only if it redirects to HTTPS
	if r.status >= 300 && r.status < 400 && strings.HasPrefix(r.header.Get("Location"), "https://") {
		return nil
	}
	return liveFinding("live.weak-tls", target, "cleartext", r, "", func() bool {
		r2, err := p.do(http.MethodGet, target, nil)
		return err == nil && !(r2.status >= 300 && r2.status < 400 && strings.HasPrefix(r2.header.Get("Location"), "https://"))
	})
}

func (p *prober) checkCORS(target string) *finding.Finding {
	evil := "https://vulnscan-" + nonce() + ".example"
	try := func() (*response, bool) {
		r, err := p.do(http.MethodGet, target, http.Header{"Origin": {evil}})
		if err != nil {
			return nil, false
		}
		return r, r.header.Get("Access-Control-Allow-Origin") == evil && strings.EqualFold(r.header.Get("Access-Control-Allow-Credentials"), "true")
	}
	r, ok := try()
	if !ok {
		return nil
	}
	return liveFinding("live.cors-credentials", target, "cors", r, "", func() bool { _, ok := try(); return ok })
}

var listingRe = regexp.MustCompile(`(?i)<title>\s*(Index of /|Directory listing for /)`)

func (p *prober) checkListing(u string, r *response) *finding.Finding {
	if r.status != 200 || !listingRe.MatchString(r.body) {
		return nil
	}
	pu, _ := url.Parse(u)
	return liveFinding("live.directory-listing", u, "listing:"+pu.Path, r, "", func() bool {
		r2, err := p.do(http.MethodGet, u, nil)
		return err == nil && r2.status == 200 && listingRe.MatchString(r2.body)
	})
}

type exposed struct {
	path string
	sig  *regexp.Regexp
}

var exposedFiles = []exposed{
	{"/.git/HEAD", regexp.MustCompile(`^ref: refs/|^[0-9a-f]{40}\s*$`)},
	{"/.git/config", regexp.MustCompile(`(?m)^\[core\]`)},
	{"/.env", regexp.MustCompile(`(?m)^[A-Z][A-Z0-9_]{2,}=\S*`)},
	{"/.DS_Store", regexp.MustCompile(`^\x00\x00\x00\x01Bud1`)},
	{"/backup.zip", regexp.MustCompile(`^PK\x03\x04`)},
	{"/backup.sql", regexp.MustCompile(`(?i)(CREATE TABLE|INSERT INTO|-- MySQL dump|PostgreSQL database dump)`)},
	{"/dump.sql", regexp.MustCompile(`(?i)(CREATE TABLE|INSERT INTO|-- MySQL dump|PostgreSQL database dump)`)},
	{"/config.php.bak", regexp.MustCompile(`<\?php`)},
	{"/.htpasswd", regexp.MustCompile(`(?m)^[^:\s]+:\$(apr1|2[aby]|1)\$`)},
	{"/server-status", regexp.MustCompile(`(?i)Apache Server Status`)},
}

func (p *prober) checkExposedFiles() []*finding.Finding {
	var out []*finding.Finding
	for _, e := range exposedFiles {
		target := p.origin.String() + e.path
		r, err := p.do(http.MethodGet, target, nil)
		if err != nil {
			if errors.Is(err, errBudget) || p.ctx.Err() != nil {
				return out
			}
			continue
		}
		if r.status != 200 || !e.sig.MatchString(r.body) {
			continue
		}
		sig := e.sig
		f := liveFinding("live.exposed-file", target, "file:"+e.path, r, "", func() bool {
			r2, err := p.do(http.MethodGet, target, nil)
			return err == nil && r2.status == 200 && sig.MatchString(r2.body)
		})
		f.Title = "Sensitive file exposed: " + e.path
		// never store the file's content: keep the first line, redacted
		first, _, _ := strings.Cut(r.body, "\n")
		if len(first) > 12 {
			first = first[:12] + "…"
		}
		s := "Request:\n" + r.req + "\nResponse:\nHTTP/1.1 200 OK\n\n" + strings.ToValidUTF8(first, "?") + " [content withheld]"
		f.ProofOfConcept = &s
		out = append(out, f)
	}
	return out
}

var redirectParams = []string{"next", "url", "redirect", "redirect_uri", "return", "returnTo", "return_to", "continue", "dest", "goto"}

func (p *prober) checkParams(pageURL string) []*finding.Finding {
	u, err := url.Parse(pageURL)
	if err != nil {
		return nil
	}
	var out []*finding.Finding
	names := map[string]bool{}
	for k := range u.Query() {
		names[k] = true
	}
	isRoot := u.Path == "" || u.Path == "/"
	if len(names) == 0 && isRoot {
		names["q"] = true
	}
	for _, n := range redirectParams {
		if u.Query().Has(n) {
			names[n] = true
		}
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, name := range keys {
		// reflected input
		mark := "vs" + nonce()
		payload := mark + `"'><i>` + mark
		target := withParam(u, name, payload)
		r, err := p.do(http.MethodGet, target, nil)
		if err != nil {
			return out
		}
		if strings.Contains(r.header.Get("Content-Type"), "html") && strings.Contains(r.body, `"'><i>`+mark) {
			f := liveFinding("live.reflected-xss", u.String(), "reflect:"+u.Path+"?"+name, r, mark, func() bool {
				r2, err := p.do(http.MethodGet, target, nil)
				return err == nil && strings.Contains(r2.body, `"'><i>`+mark)
			})
			f.Title = "Reflected input without encoding in parameter " + name
			out = append(out, f)
		}
	}
	// open redirect
	for _, name := range redirectParams {
		if !u.Query().Has(name) && !(isRoot && (name == "next" || name == "url" || name == "redirect")) {
			continue
		}
		evil := "https://vulnscan-" + nonce() + ".example/"
		target := withParam(u, name, evil)
		r, err := p.do(http.MethodGet, target, nil)
		if err != nil {
			return out
		}
		if r.status >= 300 && r.status < 400 && strings.HasPrefix(r.header.Get("Location"), evil) {
			f := liveFinding("live.open-redirect", u.String(), "redirect:"+u.Path+"?"+name, r, "", func() bool {
				r2, err := p.do(http.MethodGet, target, nil)
				return err == nil && strings.HasPrefix(r2.header.Get("Location"), evil)
			})
			f.Title = "Open redirect through parameter " + name
			out = append(out, f)
		}
	}
	return out
}

// withParam is u with its query parameter name set to value.
func withParam(u *url.URL, name, value string) string {
	q := u.Query()
	q.Set(name, value)
	tu := *u
	tu.RawQuery = q.Encode()
	return tu.String()
}

var stackRe = regexp.MustCompile(`(Traceback \(most recent call last\)|at [\w$.]+\([\w]+\.java:\d+\)|goroutine \d+ \[running\]|panic: |Exception in thread|\w+Exception: .*\n\s+at |You have an error in your SQL syntax|Warning: [a-z_]+\(\).*on line \d+|ORA-\d{5}|SQLSTATE\[|node_modules/|at Object\.<anonymous>|Whitelabel Error Page.*\n.*Exception)`)

func (p *prober) checkVerboseErrors() *finding.Finding {
	target := p.origin.String() + "/vulnscan-" + nonce() + "?id=%27%22%3C"
	r, err := p.do(http.MethodGet, target, nil)
	if err != nil {
		return nil
	}
	m := stackRe.FindString(r.body)
	if m == "" {
		return nil
	}
	return liveFinding("live.verbose-error", p.origin.String()+"/", "verbose-error", r, m, func() bool {
		r2, err := p.do(http.MethodGet, target, nil)
		return err == nil && stackRe.MatchString(r2.body)
	})
}
