package gitfetch

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/gittest"
	"github.com/vulnscan/vulnscan/pkg/netguard"
)

// gitServer serves a fresh repository with two commits over git's smart
// HTTP protocol on loopback, optionally behind basic auth.
func gitServer(t *testing.T, user, pass string) (url string, first, second string) {
	t.Helper()
	s := gittest.Start(t, gittest.Options{Wrap: func(git http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); user != "" && (!ok || u != user || p != pass) {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			git.ServeHTTP(w, r)
		})
	}})
	first = s.Publish(t, "app", map[string]string{"app.py": "print('v1')\n"})
	second = s.Commit(t, "app", "main", map[string]string{"app.py": "print('v2')\n"})
	return s.URL("app"), first, second
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
