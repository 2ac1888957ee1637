// Package gitfetch checks out a git repository at an exact commit over
// HTTPS, through an HTTP client the caller provides (in production one from
// netguard, so clones never reach non-public addresses, redirects included).
// Each fetch is bounded in time and in bytes transferred; exceeding a bound
// fails that fetch with a clear error, never the process.
package gitfetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/vulnscan/vulnscan/pkg/netguard"
)

// Source names what to fetch.
type Source struct {
	CloneURL string
	Username string // HTTP basic credentials; empty for anonymous
	Password string
	Branch   string // empty: the remote's default branch
	Commit   string // empty: the branch head
}

// Limits bound one fetch.
type Limits struct {
	MaxBytes int64
	Timeout  time.Duration
}

// DefaultLimits allow 1 GiB transferred and 10 minutes.
var DefaultLimits = Limits{MaxBytes: 1 << 30, Timeout: 10 * time.Minute}

// Errors of a fetch.
var (
	ErrTooLarge = errors.New("repository exceeds the size limit")
	ErrTimeout  = errors.New("repository fetch timed out")
	ErrNotFound = errors.New("repository, branch or commit not found")
	ErrAuth     = errors.New("repository requires valid credentials")
)

var (
	installMu sync.Mutex
	installed *http.Client
)

// NewClient returns the HTTP client for git fetches: every connection goes
// through guard (non-public addresses refused, redirects included), at most
// five redirects and only to HTTPS, and TLS trusts the system's authorities
// plus, when extraCAFile names a PEM file (VULNSCAN_EXTRA_CA_FILE), its
// certificates, for private git servers and tests. Verification is never
// turned off.
func NewClient(guard *netguard.Guard, extraCAFile string) (*http.Client, error) {
	tr := guard.Transport()
	if extraCAFile != "" {
		pem, err := os.ReadFile(extraCAFile)
		if err != nil {
			return nil, fmt.Errorf("VULNSCAN_EXTRA_CA_FILE: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("VULNSCAN_EXTRA_CA_FILE: %s holds no PEM certificate", extraCAFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			if req.URL.Scheme != "https" {
				return errors.New("redirect to a non-HTTPS URL refused")
			}
			return nil
		},
	}, nil
}

// WithBudget returns ctx carrying a budget of maxBytes for the git traffic
// made with it, and a function reporting whether the budget ran out. Once it
// has, reads fail with ErrTooLarge.
func WithBudget(ctx context.Context, maxBytes int64) (context.Context, func() bool) {
	b := &budget{}
	b.left.Store(maxBytes)
	return context.WithValue(ctx, budgetKey{}, b), b.hit.Load
}

// Install makes every git fetch of the process use c. go-git's transports
// are process-wide, so the client is installed once for http and https.
func Install(c *http.Client) {
	installMu.Lock()
	defer installMu.Unlock()
	wrapped := *c
	wrapped.Transport = budgetTransport{next: transportOf(c)}
	installed = &wrapped
	client.InstallProtocol("https", githttp.NewClient(installed))
	client.InstallProtocol("http", githttp.NewClient(installed))
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

type budgetKey struct{}

type budget struct {
	left atomic.Int64
	hit  atomic.Bool
}

// budgetTransport charges response bytes to the fetch's budget.
type budgetTransport struct{ next http.RoundTripper }

func (t budgetTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if b, ok := r.Context().Value(budgetKey{}).(*budget); ok {
		resp.Body = &budgetBody{ReadCloser: resp.Body, b: b}
	}
	return resp, nil
}

type budgetBody struct {
	io.ReadCloser
	b *budget
}

// Read never hands out bytes past the budget: once it is spent, the next
// read fails, so a truncated transfer cannot pass for a complete one.
func (bb *budgetBody) Read(p []byte) (int, error) {
	left := bb.b.left.Load()
	if left <= 0 {
		bb.b.hit.Store(true)
		return 0, ErrTooLarge
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := bb.ReadCloser.Read(p)
	bb.b.left.Add(-int64(n))
	return n, err
}

// Checkout fetches src into dir (empty or missing) and checks out the
// commit, returning the commit checked out. Only the needed history is
// transferred: the branch head alone when it is the wanted commit.
func Checkout(ctx context.Context, src Source, dir string, lim Limits) (string, error) {
	installMu.Lock()
	ready := installed != nil
	installMu.Unlock()
	if !ready {
		return "", errors.New("gitfetch: no HTTP client installed")
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	ctx, exceeded := WithBudget(ctx, lim.MaxBytes)

	opts := &git.CloneOptions{URL: src.CloneURL, SingleBranch: true, Depth: 1, Tags: git.NoTags}
	if src.Username != "" || src.Password != "" {
		user := src.Username
		if user == "" {
			user = "x-access-token"
		}
		opts.Auth = &githttp.BasicAuth{Username: user, Password: src.Password}
	}
	if src.Branch != "" {
		opts.ReferenceName = plumbing.NewBranchReferenceName(src.Branch)
	}
	repo, err := git.PlainCloneContext(ctx, dir, false, opts)
	if err == nil && exceeded() {
		err = ErrTooLarge
	}
	if err != nil {
		return "", classify(ctx, exceeded, err)
	}
	head, err := repo.Head()
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	if src.Commit == "" || head.Hash().String() == src.Commit {
		return head.Hash().String(), nil
	}
	// The branch moved since the commit was recorded: fetch its whole history
	// (go-git cannot deepen a shallow clone reliably) and check the commit out.
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	opts.Depth = 0
	repo, err = git.PlainCloneContext(ctx, dir, false, opts)
	if err == nil && exceeded() {
		err = ErrTooLarge
	}
	if err != nil {
		return "", classify(ctx, exceeded, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", err
	}
	if err := wt.Checkout(&git.CheckoutOptions{Hash: plumbing.NewHash(src.Commit), Force: true}); err != nil {
		return "", fmt.Errorf("%w: commit %s", ErrNotFound, src.Commit)
	}
	return src.Commit, nil
}

func classify(ctx context.Context, exceeded func() bool, err error) error {
	switch {
	case exceeded():
		return ErrTooLarge
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ErrTimeout
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		return ErrAuth
	case errors.Is(err, transport.ErrRepositoryNotFound), errors.Is(err, plumbing.ErrReferenceNotFound),
		strings.Contains(err.Error(), "couldn't find remote ref"):
		return ErrNotFound
	}
	return fmt.Errorf("fetch repository: %w", err)
}
