package gittest

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func clone(t *testing.T, s *Server, args ...string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "c")
	cmd := exec.Command("git", append(append([]string{"clone", "-q"}, args...), dst)...)
	cmd.Env = s.CloneEnv()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return dst
}

func TestPublishAndCommit(t *testing.T) {
	t.Parallel()
	for _, tls := range []bool{false, true} {
		s := Start(t, Options{TLS: tls})
		first := s.Publish(t, "acme/app", map[string]string{"app.py": "v1\n", "lib/util.py": "u\n"})
		second := s.Commit(t, "acme/app", "main", map[string]string{"app.py": "v2\n"})
		feature := s.Commit(t, "acme/app", "feature", map[string]string{"new.py": "n\n"})
		require.NotEqual(t, first, second)

		dir := clone(t, s, s.URL("acme/app"))
		require.Equal(t, second, Run(t, dir, "rev-parse", "HEAD"))
		require.Equal(t, first, Run(t, dir, "rev-parse", "HEAD~1"))
		b, err := os.ReadFile(filepath.Join(dir, "lib", "util.py"))
		require.NoError(t, err)
		require.Equal(t, "u\n", string(b))

		dir = clone(t, s, "-b", "feature", s.URL("acme/app"))
		require.Equal(t, feature, Run(t, dir, "rev-parse", "HEAD"))
		require.Equal(t, second, Run(t, dir, "rev-parse", "HEAD~1"), "a new branch starts from the default branch's head")
		require.Equal(t, tls, s.CAFile != "")
	}
}

func TestWrap(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{Wrap: func(git http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, pw, ok := r.BasicAuth(); !ok || pw != "pw" {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			git.ServeHTTP(w, r)
		})
	}})
	sha := s.Publish(t, "app", map[string]string{"a.txt": "a\n"})
	cmd := exec.Command("git", "clone", "-q", s.URL("app"), filepath.Join(t.TempDir(), "c"))
	cmd.Env = append(s.CloneEnv(), "GIT_TERMINAL_PROMPT=0")
	require.Error(t, cmd.Run(), "the wrapper refuses a clone without credentials")

	u := "http://x:pw@" + s.Listener.Addr().String() + "/app.git"
	require.Equal(t, sha, Run(t, clone(t, s, u), "rev-parse", "HEAD"))
}
