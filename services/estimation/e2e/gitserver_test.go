package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/gittest"
)

// gitServer serves bare repositories over git's smart HTTP protocol on a
// loopback HTTPS address, with a few special prefixes: /private/ requires
// basic auth with the password privateToken, /slow/ holds requests until
// released, /redirect/ redirects to a link-local address.
type gitServer struct {
	*gittest.Server
	slowHit chan struct{}
	release chan struct{}
	hitOnce sync.Once
}

const privateToken = "s3cret-token"

func newGitServer() (*gitServer, error) {
	g := &gitServer{slowHit: make(chan struct{}), release: make(chan struct{})}
	srv, err := gittest.New(gittest.Options{TLS: true, Wrap: g.route})
	if err != nil {
		return nil, err
	}
	g.Server = srv
	return g, nil
}

// route applies the special prefixes in front of the git backend.
func (g *gitServer) route(backend http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case strings.HasPrefix(p, "/redirect/"):
			http.Redirect(w, r, "https://169.254.169.254/"+strings.TrimPrefix(p, "/redirect/"), http.StatusFound)
			return
		case strings.HasPrefix(p, "/private/"):
			if _, pw, ok := r.BasicAuth(); !ok || pw != privateToken {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
			p = strings.TrimPrefix(p, "/private")
		case strings.HasPrefix(p, "/slow/"):
			if strings.Contains(p, "git-upload-pack") {
				g.hitOnce.Do(func() { close(g.slowHit) })
				<-g.release
			}
			p = strings.TrimPrefix(p, "/slow")
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = p
		backend.ServeHTTP(w, r2)
	})
}

// url returns the HTTPS URL of repository name under prefix ("", "private", "slow", "redirect").
func (g *gitServer) url(prefix, name string) string {
	if prefix != "" {
		return g.URL(prefix + "/" + name)
	}
	return g.URL(name)
}

// hostAPI is the git host's REST API as the git hosting integration calls
// it: it records every comment posted (pull request review comments,
// pull request conversation comments, commit comments) and answers 201.
type hostAPI struct {
	*httptest.Server
	mu    sync.Mutex
	calls []hostCall
}

type hostCall struct {
	Path string
	Body map[string]any
}

func newHostAPI(t testing.TB) *hostAPI {
	h := &hostAPI{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/comments") {
			http.NotFound(w, r)
			return
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.calls = append(h.calls, hostCall{Path: r.URL.Path, Body: body})
		h.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":1}`))
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hostAPI) got() []hostCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hostCall(nil), h.calls...)
}
