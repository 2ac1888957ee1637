package gitfetch

import (
	"context"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/netguard"
)

// gitServer serves a fresh repository with two commits over git's smart
// HTTP protocol on loopback, optionally behind basic auth.
func gitServer(t *testing.T, user, pass string) (url string, first, second string) {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	require.NoError(t, err, "git is required")
	root := t.TempDir()
	repo := filepath.Join(root, "app.git")
	run := func(dir string, args ...string) string {
		cmd := exec.Command(gitBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	work := filepath.Join(root, "work")
	require.NoError(t, os.Mkdir(work, 0o755))
	run(work, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(work, "app.py"), []byte("print('v1')\n"), 0o644))
	run(work, "add", ".")
	run(work, "commit", "-q", "-m", "one")
	first = run(work, "rev-parse", "HEAD")
	require.NoError(t, os.WriteFile(filepath.Join(work, "app.py"), []byte("print('v2')\n"), 0o644))
	run(work, "commit", "-q", "-am", "two")
	second = run(work, "rev-parse", "HEAD")
	run(root, "clone", "-q", "--bare", work, repo)

	backend := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/app.git", first, second
}

func install(t *testing.T) {
	g, err := netguard.New([]string{"127.0.0.0/8"})
	require.NoError(t, err)
	c, err := NewClient(g, "")
	require.NoError(t, err)
	Install(c)
}

func TestCheckout(t *testing.T) {
	install(t)
	url, first, second := gitServer(t, "bot", "s3cret")
	ctx := context.Background()

	t.Run("head", func(t *testing.T) {
		dir := t.TempDir()
		got, err := Checkout(ctx, Source{CloneURL: url, Username: "bot", Password: "s3cret"}, dir, DefaultLimits)
		require.NoError(t, err)
		require.Equal(t, second, got)
		b, _ := os.ReadFile(filepath.Join(dir, "app.py"))
		require.Equal(t, "print('v2')\n", string(b))
	})
	t.Run("older commit of a moved branch", func(t *testing.T) {
		dir := t.TempDir()
		got, err := Checkout(ctx, Source{CloneURL: url, Username: "bot", Password: "s3cret", Branch: "main", Commit: first}, dir, DefaultLimits)
		require.NoError(t, err)
		require.Equal(t, first, got)
		b, _ := os.ReadFile(filepath.Join(dir, "app.py"))
		require.Equal(t, "print('v1')\n", string(b))
	})
	t.Run("wrong credentials", func(t *testing.T) {
		_, err := Checkout(ctx, Source{CloneURL: url, Username: "bot", Password: "nope"}, t.TempDir(), DefaultLimits)
		require.ErrorIs(t, err, ErrAuth)
	})
	t.Run("unknown branch", func(t *testing.T) {
		_, err := Checkout(ctx, Source{CloneURL: url, Username: "bot", Password: "s3cret", Branch: "nope"}, t.TempDir(), DefaultLimits)
		require.ErrorIs(t, err, ErrNotFound)
	})
	t.Run("size limit", func(t *testing.T) {
		_, err := Checkout(ctx, Source{CloneURL: url, Username: "bot", Password: "s3cret"}, t.TempDir(), Limits{MaxBytes: 100, Timeout: time.Minute})
		require.ErrorIs(t, err, ErrTooLarge)
	})
}

func TestCheckoutRefusesPrivateAddresses(t *testing.T) {
	url, _, _ := gitServer(t, "", "")
	g, err := netguard.New(nil)
	require.NoError(t, err)
	c, err := NewClient(g, "")
	require.NoError(t, err)
	Install(c)
	t.Cleanup(func() { install(t) })
	_, err = Checkout(context.Background(), Source{CloneURL: url}, t.TempDir(), DefaultLimits)
	require.Error(t, err)
	require.Contains(t, err.Error(), "not public")
}
