package e2e

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/gittest"
	"github.com/vulnscan/vulnscan/pkg/systest"
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

// newHostAPI is the git host's REST API as the git hosting integration
// calls it: it records every request and answers comment posts (pull
// request review comments, pull request conversation comments, commit
// comments) with 201.
func newHostAPI(t testing.TB) *systest.Recorder {
	return systest.NewRecorder(t, func(c systest.Call, _ int) (int, string) {
		if c.Method != http.MethodPost || !strings.HasSuffix(c.Path, "/comments") || c.JSON() == nil {
			return http.StatusNotFound, `{"message":"Not Found"}`
		}
		return http.StatusCreated, `{"id":1}`
	})
}
