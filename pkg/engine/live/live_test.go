package live

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var testLimits = Limits{MaxPages: 10, MaxRequests: 80, Timeout: 20 * time.Second, Interval: 0, MaxBody: 64 << 10}

func vulnerableApp(authSeen *atomic.Value) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if authSeen != nil && r.Header.Get("Authorization") != "" {
			authSeen.Store(r.Header.Get("Authorization"))
		}
		if o := r.Header.Get("Origin"); o != "" {
			w.Header().Set("Access-Control-Allow-Origin", o)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
		}
		switch r.URL.Path {
		case "/":
			if next := r.URL.Query().Get("next"); next != "" {
				http.Redirect(w, r, next, http.StatusFound)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "abc"})
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><title>home</title><a href="/search?q=x">search</a><a href="/files/">files</a>%s</html>`, r.URL.Query().Get("q"))
		case "/search":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<p>Results for %s</p>", r.URL.Query().Get("q"))
		case "/files/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><title>Index of /files/</title><a href=\"a.txt\">a.txt</a></html>")
		case "/.git/HEAD":
			fmt.Fprint(w, "ref: refs/heads/main\n")
		case "/.env":
			fmt.Fprint(w, "DB_PASSWORD=hunter2\n")
		default:
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "Traceback (most recent call last):\n  File \"app.py\", line 3\n")
		}
	})
	return mux
}

func hardenedApp() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "abc", HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html>hello %s</html>", strings.ReplaceAll(r.URL.Query().Get("q"), "<", "&lt;"))
	})
}

func rules(res Result) map[string]bool {
	m := map[string]bool{}
	for _, f := range res.Findings {
		m[f.RuleID] = true
	}
	return m
}

func TestProbe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.Handler
		want    []string
		notWant []string
	}{
		{
			name:    "vulnerable",
			handler: vulnerableApp(nil),
			want: []string{"live.missing-security-headers", "live.cookie-flags", "live.cors-credentials", "live.directory-listing",
				"live.exposed-file", "live.reflected-xss", "live.open-redirect", "live.verbose-error", "live.weak-tls"},
		},
		{
			name:    "hardened",
			handler: hardenedApp(),
			notWant: []string{"live.missing-security-headers", "live.cookie-flags", "live.cors-credentials", "live.directory-listing",
				"live.exposed-file", "live.reflected-xss", "live.open-redirect", "live.verbose-error"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tc.handler) // listens on 127.0.0.1 only
			defer srv.Close()
			require.True(t, strings.HasPrefix(srv.URL, "http://127.0.0.1:"))
			res, err := Probe(context.Background(), srv.Client(), srv.URL+"/", nil, testLimits)
			require.NoError(t, err)
			got := rules(res)
			for _, id := range tc.want {
				require.True(t, got[id], "missing %s; got %v", id, got)
			}
			for _, id := range tc.notWant {
				require.False(t, got[id], "unexpected %s", id)
			}
			for _, f := range res.Findings {
				require.NotNil(t, f.ProofOfConcept)
				require.NotNil(t, f.Reproduce)
				require.True(t, f.Reproduce(), "%s not reproduced", f.RuleID)
				require.NotContains(t, *f.ProofOfConcept, "hunter2")
			}
			require.LessOrEqual(t, res.Requests, testLimits.MaxRequests)
		})
	}
}

func TestProbeSendsAuthHeadersButNeverShowsThem(t *testing.T) {
	t.Parallel()
	var seen atomic.Value
	srv := httptest.NewServer(vulnerableApp(&seen))
	defer srv.Close()
	headers := ParseAuthHeaders("Log in as alice / wonderland first.\nAuthorization: Bearer s3cr3t-token\nCookie: sid=42\n")
	require.Len(t, headers, 2)
	res, err := Probe(context.Background(), srv.Client(), srv.URL, headers, testLimits)
	require.NoError(t, err)
	require.Equal(t, "Bearer s3cr3t-token", seen.Load())
	for _, f := range res.Findings {
		require.NotContains(t, *f.ProofOfConcept, "s3cr3t-token")
		require.NotContains(t, *f.ProofOfConcept, "sid=42")
	}
}

func TestProbeStaysOnOriginAndBudget(t *testing.T) {
	t.Parallel()
	var other atomic.Int32
	otherSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { other.Add(1) }))
	defer otherSrv.Close()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		// an endless site plus a link to another origin
		fmt.Fprintf(w, `<a href="%s/x">out</a><a href="/p%d">next</a><a href="/q%d">next</a>`, otherSrv.URL, hits.Load(), hits.Load())
	}))
	defer srv.Close()
	lim := Limits{MaxPages: 5, MaxRequests: 12, Timeout: 10 * time.Second, MaxBody: 4096}
	res, err := Probe(context.Background(), srv.Client(), srv.URL, nil, lim)
	require.NoError(t, err)
	require.LessOrEqual(t, int(hits.Load()), 12)
	require.Equal(t, int32(0), other.Load())
	require.LessOrEqual(t, res.Requests, 12)
}

func TestProbeHonoursCancellation(t *testing.T) {
	t.Parallel()
	// The server never answers on its own: the probe can only return because
	// it gave up when its context ended, and the server sees the request
	// abandoned. (A watchdog far above any scheduling delay turns a hang into
	// a failure instead of a stuck test.)
	release := make(chan struct{})
	abandoned := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			abandoned <- struct{}{}
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Probe(ctx, srv.Client(), srv.URL, nil, testLimits)
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(time.Minute):
		t.Fatal("the probe did not stop when its context ended")
	}
	select {
	case <-abandoned:
	case <-time.After(time.Minute):
		t.Fatal("the server never saw the request abandoned")
	}
}

func TestParseAuthHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []Header
	}{
		{"X-Api-Key: abc", []Header{{"X-Api-Key", "abc"}}},
		{"Use the admin account\nhttps://example.com/login", nil},
		{"Bad Header: x\nX-Ok: y", []Header{{"X-Ok", "y"}}},
		{"", nil},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, ParseAuthHeaders(tc.in), tc.in)
	}
}

func FuzzParseAuthHeaders(f *testing.F) {
	f.Add("Authorization: Bearer x\nCookie: a=b\nfree text")
	f.Add("::::\n\x00: \r\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, h := range ParseAuthHeaders(s) {
			require.True(t, headerName.MatchString(h.Name))
			require.NotContains(t, h.Value, "\n")
		}
	})
}
