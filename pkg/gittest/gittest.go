// Package gittest serves git repositories to tests over git's smart HTTP
// protocol on a loopback address (git http-backend behind net/http/cgi), and
// builds the repositories they clone with the git command: from files, with
// more commits and branches. Tests that exercise real clones use it instead
// of a remote host.
package gittest

import (
	"encoding/pem"
	"errors"
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

// Options change how a Server is started.
type Options struct {
	// TLS serves HTTPS with a certificate of its own, written to CAFile
	// for clients that must trust it.
	TLS bool
	// Wrap, when set, receives the git backend and returns the handler the
	// server runs: authentication, redirects or held requests in front of
	// git.
	Wrap func(git http.Handler) http.Handler
}

// Server serves the bare repositories under Root.
type Server struct {
	*httptest.Server
	// Root holds one bare repository per name ("acme/app" is
	// Root/acme/app.git).
	Root string
	// CAFile is the PEM of the server's certificate (TLS servers only).
	CAFile string

	mu     sync.Mutex // repositories are written one at a time
	ownDir bool
}

// New starts a server over a fresh temporary directory, for a TestMain;
// Close stops it and removes the directory.
func New(opts Options) (*Server, error) {
	root, err := os.MkdirTemp("", "vulnscan-git-")
	if err != nil {
		return nil, err
	}
	s, err := Serve(root, opts)
	if err != nil {
		_ = os.RemoveAll(root)
		return nil, err
	}
	s.ownDir = true
	return s, nil
}

// Start starts a server over a directory of the test's, closed with it.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Serve(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Serve starts a server over the bare repositories already under root.
func Serve(root string, opts Options) (*Server, error) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil, errors.New("git is required")
	}
	var h http.Handler = &cgi.Handler{Path: gitBin, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	s := &Server{Root: root}
	if !opts.TLS {
		s.Server = httptest.NewServer(h)
		return s, nil
	}
	s.Server = httptest.NewTLSServer(h)
	s.CAFile = filepath.Join(root, "ca.pem")
	if err := os.WriteFile(s.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o600); err != nil {
		s.Server.Close()
		return nil, err
	}
	return s, nil
}

// Close stops the server (and removes its directory when New made it).
func (s *Server) Close() {
	s.Server.Close()
	if s.ownDir {
		_ = os.RemoveAll(s.Root)
	}
}

// URL returns the clone URL of repository name.
func (s *Server) URL(name string) string { return s.Server.URL + "/" + name + ".git" }

// Publish commits files (slash-separated path → content) as the first
// commit of branch main of a new repository name, and returns the commit.
func (s *Server) Publish(t testing.TB, name string, files map[string]string) string {
	t.Helper()
	work := t.TempDir()
	WriteFiles(t, work, files)
	return s.PublishDir(t, name, work)
}

// PublishDir commits the files of directory src as the first commit of
// branch main of a new repository name, and returns the commit. src is
// left as it was.
func (s *Server) PublishDir(t testing.TB, name, src string) string {
	t.Helper()
	work := t.TempDir()
	if err := os.CopyFS(work, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	Run(t, work, "init", "-q", "-b", "main")
	Run(t, work, "add", "-A")
	Run(t, work, "commit", "-q", "-m", "initial")
	sha := Run(t, work, "rev-parse", "HEAD")
	s.mu.Lock()
	defer s.mu.Unlock()
	bare := filepath.Join(s.Root, name+".git")
	Run(t, s.Root, "clone", "-q", "--bare", work, bare)
	Run(t, bare, "config", "http.uploadpack", "true")
	return sha
}

// Commit writes files over the head of branch of repository name (the
// branch starts from the default branch's head when it does not exist),
// commits and pushes them, and returns the new commit.
func (s *Server) Commit(t testing.TB, name, branch string, files map[string]string) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	work := filepath.Join(t.TempDir(), "w")
	Run(t, s.Root, "clone", "-q", filepath.Join(s.Root, name+".git"), work)
	if Run(t, work, "ls-remote", "--heads", "origin", branch) == "" {
		Run(t, work, "checkout", "-q", "-b", branch)
	} else {
		Run(t, work, "checkout", "-q", branch)
	}
	WriteFiles(t, work, files)
	Run(t, work, "add", "-A")
	Run(t, work, "commit", "-q", "-m", "change on "+branch)
	Run(t, work, "push", "-q", "origin", branch)
	return Run(t, work, "rev-parse", "HEAD")
}

// WriteFiles writes files (slash-separated path → content) under dir.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Env is the environment git runs with here: a fixed author and
// committer, and no user or system configuration to change its behaviour.
func Env() []string {
	return append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
}

// Run runs git with args in dir under Env, fails t when it fails, and
// returns its output without surrounding white space.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// CloneEnv is the environment a git client needs to clone from a TLS
// server s (its certificate trusted), for comparisons with plain git.
func (s *Server) CloneEnv() []string {
	env := Env()
	if s.CAFile != "" {
		env = append(env, "GIT_SSL_CAINFO="+s.CAFile)
	}
	return env
}
