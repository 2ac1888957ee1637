package live_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/live"
)

var limits = live.Limits{MaxPages: 8, MaxRequests: 100, Timeout: 30 * time.Second, MaxBody: 64 << 10}

// site is a loopback application that passes every check unless a case
// changes one behaviour: it sends the security headers, sets no cookie,
// encodes what it reflects, and answers unknown paths with a plain 404.
type site struct {
	header   func(h http.Header)                               // changes the headers of every response
	route    func(w http.ResponseWriter, r *http.Request) bool // answers a request itself when it returns true
	homeBody string
}

func (s site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Strict-Transport-Security", "max-age=63072000")
	if s.header != nil {
		s.header(h)
	}
	if s.route != nil && s.route(w, r) {
		return
	}
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	body := s.homeBody
	if body == "" {
		body = "<html><title>home</title>hello</html>"
	}
	fmt.Fprint(w, body)
}

// probe runs a probe of a TLS loopback server and returns the sorted rule
// ids of its findings, checking that every finding reproduces.
func probe(t *testing.T, h http.Handler) ([]string, live.Result) {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	res, err := live.Probe(context.Background(), srv.Client(), srv.URL+"/", nil, limits)
	require.NoError(t, err)
	ids := []string{}
	for _, f := range res.Findings {
		ids = append(ids, f.RuleID)
		require.Equal(t, "http", f.Language)
		require.NotNil(t, f.ProofOfConcept)
		require.NotNil(t, f.Reproduce)
		require.True(t, f.Reproduce(), "%s reproduces", f.RuleID)
		require.True(t, strings.HasPrefix(f.AffectedFile, srv.URL), f.AffectedFile)
		require.NotContains(t, f.AffectedFile, "?", "the location carries no query")
	}
	sort.Strings(ids)
	return ids, res
}

func TestHardenedSiteHasNoFindings(t *testing.T) {
	t.Parallel()
	ids, res := probe(t, site{})
	require.Empty(t, ids)
	require.Positive(t, res.Requests)
	require.LessOrEqual(t, res.Requests, limits.MaxRequests)
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		header func(http.Header)
		want   []string
	}{
		{"no content security policy", func(h http.Header) { h.Del("Content-Security-Policy") }, []string{"live.missing-security-headers"}},
		{"nosniff missing", func(h http.Header) { h.Del("X-Content-Type-Options") }, []string{"live.missing-security-headers"}},
		{"nosniff with another value", func(h http.Header) { h.Set("X-Content-Type-Options", "sniff") }, []string{"live.missing-security-headers"}},
		{"nosniff in capitals", func(h http.Header) { h.Set("X-Content-Type-Options", "NOSNIFF") }, nil},
		{"frame-ancestors replaces X-Frame-Options", func(h http.Header) {
			h.Del("X-Frame-Options")
			h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		}, nil},
		{"no framing protection", func(h http.Header) { h.Del("X-Frame-Options") }, []string{"live.missing-security-headers"}},
		{"no HSTS over HTTPS", func(h http.Header) { h.Del("Strict-Transport-Security") }, []string{"live.missing-security-headers"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ids, res := probe(t, site{header: tc.header})
			want := tc.want
			if want == nil {
				want = []string{}
			}
			require.Equal(t, want, ids)
			for _, f := range res.Findings {
				require.Contains(t, f.Description, "Missing here:")
			}
		})
	}
}

func TestSecurityHeadersOnlyForHTML(t *testing.T) {
	t.Parallel()
	ids, _ := probe(t, site{
		header: func(h http.Header) { h.Del("Content-Security-Policy") },
		route: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != "/" {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"ok":true}`)
			return true
		},
	})
	require.Empty(t, ids, "an API answer needs no browser headers")
}

func TestCookieFlags(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		cookie http.Cookie
		want   string // "" none; otherwise a flag named in the title
	}{
		{"all flags", http.Cookie{Name: "s", Value: "v", HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode}, ""},
		{"no HttpOnly", http.Cookie{Name: "s", Value: "v", Secure: true, SameSite: http.SameSiteLaxMode}, "HttpOnly"},
		{"no Secure over HTTPS", http.Cookie{Name: "s", Value: "v", HttpOnly: true, SameSite: http.SameSiteLaxMode}, "Secure"},
		{"no SameSite attribute", http.Cookie{Name: "s", Value: "v", HttpOnly: true, Secure: true}, "SameSite"},
		{"SameSite None counts as set", http.Cookie{Name: "s", Value: "v", HttpOnly: true, Secure: true, SameSite: http.SameSiteNoneMode}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := tc.cookie
			ids, res := probe(t, site{route: func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path == "/" {
					http.SetCookie(w, &c)
				}
				return false
			}})
			if tc.want == "" {
				require.Empty(t, ids)
				return
			}
			require.Equal(t, []string{"live.cookie-flags"}, ids)
			f := res.Findings[0]
			require.Contains(t, f.Title, `"s"`)
			require.Contains(t, f.Title, tc.want)
			require.Contains(t, *f.ProofOfConcept, "Set-Cookie: s=[value]", "cookie values are withheld")
			require.NotContains(t, *f.ProofOfConcept, "s=v")
		})
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	reflect := func(creds bool) func(http.ResponseWriter, *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			if o := r.Header.Get("Origin"); o != "" {
				w.Header().Set("Access-Control-Allow-Origin", o)
				if creds {
					w.Header().Set("Access-Control-Allow-Credentials", "true")
				}
			}
			return false
		}
	}
	ids, _ := probe(t, site{route: reflect(true)})
	require.Equal(t, []string{"live.cors-credentials"}, ids)
	ids, _ = probe(t, site{route: reflect(false)})
	require.Empty(t, ids, "a reflected origin without credentials exposes nothing private")
	ids, _ = probe(t, site{header: func(h http.Header) {
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Credentials", "true")
	}})
	require.Empty(t, ids, "browsers refuse a wildcard with credentials")
}

func TestDirectoryListing(t *testing.T) {
	t.Parallel()
	for _, title := range []string{"Index of /files/", "Directory listing for /files/"} {
		ids, res := probe(t, site{
			homeBody: `<html><title>home</title><a href="/files/">files</a></html>`,
			route: func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != "/files/" {
					return false
				}
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, "<html><title>%s</title></html>", title)
				return true
			},
		})
		require.Equal(t, []string{"live.directory-listing"}, ids, title)
		require.True(t, strings.HasSuffix(res.Findings[0].AffectedFile, "/files/"))
	}
	ids, _ := probe(t, site{homeBody: "<html><title>Index of products</title></html>"})
	require.Empty(t, ids, "a page merely titled like an index")
}

func TestExposedFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		path, body string
		found      bool
	}{
		{"/.git/HEAD", "ref: refs/heads/main\n", true},
		{"/.git/HEAD", "0123456789abcdef0123456789abcdef01234567\n", true},
		{"/.git/HEAD", "<html>not found</html>", false},
		{"/.git/config", "[core]\n\trepositoryformatversion = 0\n", true},
		{"/.env", "DATABASE_URL=postgres://u:p@h/db\n", true},
		{"/.env", "# nothing here\n", false},
		{"/.DS_Store", "\x00\x00\x00\x01Bud1\x00", true},
		{"/backup.zip", "PK\x03\x04rest", true},
		{"/backup.sql", "-- MySQL dump 10.13\n", true},
		{"/dump.sql", "CREATE TABLE users (id int);\n", true},
		{"/config.php.bak", "<?php $db = 'x';\n", true},
		{"/.htpasswd", "admin:$apr1$abc$def\n", true},
		{"/.htpasswd", "admin:plain\n", false},
		{"/server-status", "<h1>Apache Server Status for x</h1>", true},
	}
	for _, tc := range cases {
		t.Run(tc.path+" "+fmt.Sprint(tc.found), func(t *testing.T) {
			t.Parallel()
			ids, res := probe(t, site{route: func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != tc.path {
					return false
				}
				fmt.Fprint(w, tc.body)
				return true
			}})
			if !tc.found {
				require.Empty(t, ids)
				return
			}
			require.Equal(t, []string{"live.exposed-file"}, ids)
			f := res.Findings[0]
			require.Equal(t, "Sensitive file exposed: "+tc.path, f.Title)
			require.Contains(t, *f.ProofOfConcept, "[content withheld]")
			if len(tc.body) > 14 {
				require.NotContains(t, *f.ProofOfConcept, strings.TrimSpace(tc.body), "the file's content is never stored")
			}
		})
	}
}

func TestSoftNotFoundIsNotAnExposedFile(t *testing.T) {
	t.Parallel()
	// A site answering every path with 200 and its home page.
	ids, _ := probe(t, site{route: func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><title>home</title>welcome</html>")
		return true
	}})
	require.Empty(t, ids)
}

func TestReflectedInput(t *testing.T) {
	t.Parallel()
	page := func(encode bool, ctype string) func(http.ResponseWriter, *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != "/search" {
				return false
			}
			q := r.URL.Query().Get("q")
			if encode {
				q = strings.NewReplacer("<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace(q)
			}
			w.Header().Set("Content-Type", ctype)
			fmt.Fprintf(w, "<p>Results for %s</p>", q)
			return true
		}
	}
	home := `<html><title>home</title><a href="/search?q=x">search</a></html>`
	ids, res := probe(t, site{homeBody: home, route: page(false, "text/html")})
	require.Equal(t, []string{"live.reflected-xss"}, ids)
	require.Equal(t, "Reflected input without encoding in parameter q", res.Findings[0].Title)
	require.Contains(t, *res.Findings[0].ProofOfConcept, `"'><i>`)

	ids, _ = probe(t, site{homeBody: home, route: page(true, "text/html")})
	require.Empty(t, ids, "encoded output")
	ids, _ = probe(t, site{homeBody: home, route: page(false, "text/plain")})
	require.Empty(t, ids, "not HTML")
}

func TestOpenRedirect(t *testing.T) {
	t.Parallel()
	redirect := func(param string, onlyRelative bool) func(http.ResponseWriter, *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			next := r.URL.Query().Get(param)
			if r.URL.Path != "/" || next == "" {
				return false
			}
			if onlyRelative && !strings.HasPrefix(next, "/") {
				next = "/"
			}
			http.Redirect(w, r, next, http.StatusFound)
			return true
		}
	}
	for _, p := range []string{"next", "url", "redirect"} {
		ids, res := probe(t, site{route: redirect(p, false)})
		require.Equal(t, []string{"live.open-redirect"}, ids, p)
		require.Equal(t, "Open redirect through parameter "+p, res.Findings[0].Title)
	}
	ids, _ := probe(t, site{route: redirect("next", true)})
	require.Empty(t, ids, "relative redirects only")

	// A parameter the crawl discovers on a page.
	ids, _ = probe(t, site{
		homeBody: `<html><title>home</title><a href="/login?return_to=/home">login</a></html>`,
		route: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != "/login" {
				return false
			}
			http.Redirect(w, r, r.URL.Query().Get("return_to"), http.StatusFound)
			return true
		},
	})
	require.Equal(t, []string{"live.open-redirect"}, ids)
}

func TestVerboseErrors(t *testing.T) {
	t.Parallel()
	traces := []string{
		"Traceback (most recent call last):\n  File \"app.py\", line 3",
		"java.lang.NullPointerException: x\n\tat com.app.Main(Main.java:10)",
		"goroutine 1 [running]:\nmain.main()",
		"You have an error in your SQL syntax; check the manual",
		"Warning: mysqli_query() expects parameter 1 on line 12",
		"SQLSTATE[42000]: Syntax error",
		"Error\n    at Object.<anonymous> (/srv/app.js:1:1)",
	}
	for _, tr := range traces {
		ids, _ := probe(t, site{route: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/" {
				return false
			}
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, tr)
			return true
		}})
		require.Equal(t, []string{"live.verbose-error"}, ids, tr)
	}
	ids, _ := probe(t, site{route: func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/" {
			return false
		}
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, "Something went wrong. Request id 42.")
		return true
	}})
	require.Empty(t, ids, "a generic error page")
}

func TestCleartextHTTP(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(site{})
	t.Cleanup(srv.Close)
	res, err := live.Probe(context.Background(), srv.Client(), srv.URL, nil, limits)
	require.NoError(t, err)
	var ids []string
	for _, f := range res.Findings {
		ids = append(ids, f.RuleID)
	}
	require.Equal(t, []string{"live.weak-tls"}, ids, "HSTS and Secure are not required over HTTP, TLS is")

	redir := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://example.invalid"+r.URL.Path, http.StatusMovedPermanently)
	}))
	t.Cleanup(redir.Close)
	res, err = live.Probe(context.Background(), redir.Client(), redir.URL, nil, limits)
	require.NoError(t, err)
	for _, f := range res.Findings {
		require.NotEqual(t, "live.weak-tls", f.RuleID, "a redirect to HTTPS is fine")
	}
}

func TestProbeRejectsInvalidTargets(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"", "ftp://example.com/", "example.com", "http://", "://x", "javascript:alert(1)"} {
		_, err := live.Probe(context.Background(), http.DefaultClient, target, nil, limits)
		require.Error(t, err, target)
	}
}

func TestProbeZeroLimitsUseDefaults(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(site{})
	t.Cleanup(srv.Close)
	res, err := live.Probe(context.Background(), srv.Client(), srv.URL, nil, live.Limits{})
	require.NoError(t, err)
	require.Empty(t, res.Findings)
	require.LessOrEqual(t, res.Requests, live.DefaultLimits.MaxRequests)
}

func TestProbeRequestBudget(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(site{})
	t.Cleanup(srv.Close)
	lim := limits
	lim.MaxRequests = 3
	res, err := live.Probe(context.Background(), srv.Client(), srv.URL, nil, lim)
	require.NoError(t, err)
	require.Equal(t, 3, res.Requests, "the probe stops at its request budget")
}

func TestSafeURL(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"https://user:pw@example.com/a/b?token=x#frag": "https://example.com/a/b",
		"http://example.com":                           "http://example.com",
		"http://example.com:8080/":                     "http://example.com:8080/",
		"%zz":                                          "invalid-url",
	}
	for in, want := range cases {
		require.Equal(t, want, live.SafeURL(in), in)
	}
}

func TestParseAuthHeaderLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want []live.Header
	}{
		{"Authorization: Bearer abc", []live.Header{{Name: "Authorization", Value: "Bearer abc"}}},
		{"x-api-key:k1\n  cookie: a=b; c=d  ", []live.Header{{Name: "X-Api-Key", Value: "k1"}, {Name: "Cookie", Value: "a=b; c=d"}}},
		{"Log in as admin: use the form", nil},
		{"https://example.com/login", nil},
		{"http: //x", nil},
		{"Empty:", nil},
		{": value", nil},
		{"Bad(Name): v", nil},
		{"Token: a:b:c", []live.Header{{Name: "Token", Value: "a:b:c"}}},
		{"", nil},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, live.ParseAuthHeaders(tc.in), "%q", tc.in)
	}
}
