package gitfetch

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/netguard"
)

func loopbackGuard(t *testing.T) *netguard.Guard {
	t.Helper()
	g, err := netguard.New([]string{"127.0.0.0/8"})
	require.NoError(t, err)
	return g
}

// A private git server's certificate is trusted only through the extra CA
// file; verification is never skipped.
func TestNewClientExtraCA(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))
	notPEM := filepath.Join(dir, "junk.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))

	_, err := NewClient(loopbackGuard(t), filepath.Join(dir, "missing.pem"))
	require.ErrorContains(t, err, "VULNSCAN_EXTRA_CA_FILE")
	_, err = NewClient(loopbackGuard(t), notPEM)
	require.ErrorContains(t, err, "holds no PEM certificate")

	plain, err := NewClient(loopbackGuard(t), "")
	require.NoError(t, err)
	_, err = plain.Get(srv.URL)
	require.Error(t, err, "the test server's certificate is not trusted by default")
	require.Contains(t, err.Error(), "certificate")

	trusting, err := NewClient(loopbackGuard(t), caFile)
	require.NoError(t, err)
	resp, err := trusting.Get(srv.URL)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "ok", string(body))

	// The guard still applies: without the loopback exemption the same
	// server is refused before any TLS.
	strict, err := netguard.New(nil)
	require.NoError(t, err)
	guarded, err := NewClient(strict, caFile)
	require.NoError(t, err)
	_, err = guarded.Get(srv.URL)
	require.Error(t, err)
}

// Redirects: at most five, and only to HTTPS.
func TestNewClientRedirectPolicy(t *testing.T) {
	t.Parallel()
	c, err := NewClient(loopbackGuard(t), "")
	require.NoError(t, err)
	req := func(raw string) *http.Request {
		r, err := http.NewRequest(http.MethodGet, raw, nil)
		require.NoError(t, err)
		return r
	}
	via := func(n int) []*http.Request {
		out := make([]*http.Request, n)
		for i := range out {
			out[i] = req(fmt.Sprintf("https://git.example/%d", i))
		}
		return out
	}
	for _, tc := range []struct {
		to   string
		hops int
		err  string
	}{
		{"https://git.example/repo.git", 1, ""},
		{"https://git.example/repo.git", 4, ""},
		{"https://git.example/repo.git", 5, "stopped after 5 redirects"},
		{"http://git.example/repo.git", 1, "non-HTTPS"},
		{"ftp://git.example/repo.git", 1, "non-HTTPS"},
	} {
		err := c.CheckRedirect(req(tc.to), via(tc.hops))
		if tc.err == "" {
			require.NoError(t, err, "%s after %d", tc.to, tc.hops)
			continue
		}
		require.ErrorContains(t, err, tc.err, "%s after %d", tc.to, tc.hops)
	}
}

// The budget counts response bytes of requests made with its context:
// within it a body reads whole; past it reads stop at the budget with
// ErrTooLarge and the budget reports it ran out. Requests without a budget
// are not limited.
func TestBudgetTransport(t *testing.T) {
	t.Parallel()
	payload := strings.Repeat("p", 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, payload) }))
	t.Cleanup(srv.Close)
	c := &http.Client{Transport: budgetTransport{next: transportOf(&http.Client{})}}
	get := func(ctx context.Context) ([]byte, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		resp, err := c.Do(r)
		require.NoError(t, err)
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
	for _, tc := range []struct {
		name   string
		budget int64
		got    int
		over   bool
	}{
		{"ample budget", 5000, 1000, false},
		{"small budget", 300, 300, true},
		{"spent budget", 0, 0, true},
	} {
		ctx, exceeded := WithBudget(context.Background(), tc.budget)
		body, err := get(ctx)
		require.Len(t, body, tc.got, tc.name)
		require.Equal(t, tc.over, exceeded(), tc.name)
		if tc.over {
			require.ErrorIs(t, err, ErrTooLarge, tc.name)
		} else {
			require.NoError(t, err, tc.name)
		}
	}
	// Two requests share one budget.
	ctx, exceeded := WithBudget(context.Background(), 1500)
	_, err := get(ctx)
	require.NoError(t, err)
	body, err := get(ctx)
	require.ErrorIs(t, err, ErrTooLarge)
	require.Len(t, body, 500)
	require.True(t, exceeded())

	body, err = get(context.Background())
	require.NoError(t, err)
	require.Len(t, body, 1000)
}

// classify turns transport failures into the package's errors; the size
// budget wins over everything, then the deadline.
func TestClassify(t *testing.T) {
	t.Parallel()
	no := func() bool { return false }
	yes := func() bool { return true }
	expired, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-expired.Done()
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		exceeded func() bool
		err      error
		want     error
	}{
		{"budget", context.Background(), yes, transport.ErrRepositoryNotFound, ErrTooLarge},
		{"budget beats the deadline", expired, yes, errors.New("x"), ErrTooLarge},
		{"deadline", expired, no, errors.New("read: i/o timeout"), ErrTimeout},
		{"authentication required", context.Background(), no, transport.ErrAuthenticationRequired, ErrAuth},
		{"authorization failed", context.Background(), no, fmt.Errorf("fetch: %w", transport.ErrAuthorizationFailed), ErrAuth},
		{"repository not found", context.Background(), no, transport.ErrRepositoryNotFound, ErrNotFound},
		{"reference not found", context.Background(), no, plumbing.ErrReferenceNotFound, ErrNotFound},
		{"missing remote ref", context.Background(), no, errors.New("couldn't find remote ref refs/heads/gone"), ErrNotFound},
		{"unadvertised commit", context.Background(), no, errors.New("server: not our ref 0123abcd"), ErrNotFound},
	} {
		require.ErrorIs(t, classify(tc.ctx, tc.exceeded, tc.err), tc.want, tc.name)
	}
	other := errors.New("connection reset")
	err := classify(context.Background(), no, other)
	require.ErrorIs(t, err, other)
	require.ErrorContains(t, err, "fetch repository: connection reset")
	for _, known := range []error{ErrTooLarge, ErrTimeout, ErrAuth, ErrNotFound} {
		require.NotErrorIs(t, err, known)
	}
}

func TestListFilesStopsWithItsContext(t *testing.T) {
	t.Parallel()
	expired, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-expired.Done()
	_, err := ListFiles(expired, &object.Tree{}, DefaultLimits)
	require.ErrorIs(t, err, ErrTimeout)

	cancelled, stop := context.WithCancel(context.Background())
	stop()
	_, err = ListFiles(cancelled, &object.Tree{}, DefaultLimits)
	require.ErrorIs(t, err, context.Canceled)

	files, err := ListFiles(context.Background(), &object.Tree{}, DefaultLimits)
	require.NoError(t, err)
	require.Empty(t, files)

	require.Equal(t, ErrTimeout, ctxErr(context.DeadlineExceeded))
	require.Equal(t, context.Canceled, ctxErr(context.Canceled))
}

func TestCtxReader(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	r := ctxReader{ctx, strings.NewReader("abcdef")}
	buf := make([]byte, 3)
	n, err := r.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "abc", string(buf[:n]))
	cancel()
	_, err = r.Read(buf)
	require.ErrorIs(t, err, context.Canceled)
}
