package e2e

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// gitServer serves bare repositories over git's smart HTTP protocol (git
// http-backend) on a loopback HTTPS address, with a few special prefixes:
// /private/ requires basic auth with the password privateToken, /slow/
// holds requests until released, /redirect/ redirects to a link-local
// address.
type gitServer struct {
	*httptest.Server
	root    string
	caFile  string
	mu      sync.Mutex
	slowHit chan struct{}
	release chan struct{}
	hitOnce sync.Once
}

const privateToken = "s3cret-token"

func newGitServer() (*gitServer, error) {
	root, err := os.MkdirTemp("", "vulnscan-git-")
	if err != nil {
		return nil, err
	}
	g := &gitServer{root: root, slowHit: make(chan struct{}), release: make(chan struct{})}
	backend := &cgi.Handler{
		Path: gitHTTPBackend(),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	g.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	}))
	ca := filepath.Join(root, "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: g.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		return nil, err
	}
	g.caFile = ca
	return g, nil
}

func gitHTTPBackend() string {
	out, err := exec.Command("git", "--exec-path").Output()
	if err == nil {
		return filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	}
	return "/usr/lib/git-core/git-http-backend"
}

func (g *gitServer) Close() {
	g.Server.Close()
	_ = os.RemoveAll(g.root)
}

// URL returns the HTTPS URL of repository name under prefix ("", "private", "slow", "redirect").
func (g *gitServer) URL(prefix, name string) string {
	if prefix != "" {
		return g.Server.URL + "/" + prefix + "/" + name + ".git"
	}
	return g.Server.URL + "/" + name + ".git"
}

func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// addRepo publishes the files of fixture directory src as bare repository
// name with branch main, and returns the commit.
func (g *gitServer) addRepo(t testing.TB, name, src string) string {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	work := t.TempDir()
	must(t, os.CopyFS(work, os.DirFS(src)))
	run(t, work, "init", "-q", "-b", "main")
	run(t, work, "add", "-A")
	run(t, work, "commit", "-q", "-m", "initial")
	sha := run(t, work, "rev-parse", "HEAD")
	bare := filepath.Join(g.root, name+".git")
	run(t, g.root, "clone", "-q", "--bare", work, bare)
	run(t, bare, "config", "http.uploadpack", "true")
	return sha
}

// addBranch adds a commit on a new branch of an existing repository.
func (g *gitServer) addBranch(t testing.TB, name, branch, file, content string) string {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	work := t.TempDir()
	bare := filepath.Join(g.root, name+".git")
	run(t, work, "clone", "-q", bare, "w")
	w := filepath.Join(work, "w")
	run(t, w, "checkout", "-q", "-b", branch)
	must(t, os.WriteFile(filepath.Join(w, file), []byte(content), 0o644))
	run(t, w, "add", "-A")
	run(t, w, "commit", "-q", "-m", "branch")
	run(t, w, "push", "-q", "origin", branch)
	return run(t, w, "rev-parse", "HEAD")
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
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
