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
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/rmtree"
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
	MaxBytes     int64         // bytes received from the remote
	Timeout      time.Duration // the whole fetch and write
	MaxFiles     int           // regular files in the commit
	MaxTreeBytes int64         // their declared sizes added up
	MaxFileBytes int64         // larger files are skipped unread
}

// DefaultLimits allow 1 GiB transferred, 10 minutes, 100,000 files and
// 1 GiB of files (an upload's bounds); files over 4 MiB are not written
// (the scan engine reads files up to 1 MiB).
var DefaultLimits = Limits{MaxBytes: 1 << 30, Timeout: 10 * time.Minute, MaxFiles: 100_000, MaxTreeBytes: 1 << 30, MaxFileBytes: 4 << 20}

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

// Checkout fetches the commit src.Commit (or, when empty, the branch head)
// and writes its files under dir, returning the commit written. There is no
// git working-tree checkout: the commit's tree is walked here, and every
// regular file is written under the limits, checked before anything is
// read: more than MaxFiles files or more than MaxTreeBytes of declared
// content fails with ErrTooLarge before a single file is inflated (1,000
// tree entries pointing at one 1 GiB blob pack into a megabyte but declare a
// terabyte); a blob larger than MaxFileBytes is skipped unread; links and
// submodules are not written. The object store lives in a directory beside
// dir (removed before returning), so dir holds only the commit's files.
//
// The commit is fetched by its hash where the server allows it; otherwise
// the branch head is fetched shallow and, if the branch has moved on, the
// branch's history, in which the commit is looked up. A commit that is no
// longer reachable fails with ErrNotFound, never with another commit.
// ctx's deadline and cancellation bound all of it, with Timeout on top.
func Checkout(ctx context.Context, src Source, dir string, lim Limits) (_ string, err error) {
	installMu.Lock()
	ready := installed != nil
	installMu.Unlock()
	if !ready {
		return "", errors.New("gitfetch: no HTTP client installed")
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	ctx, exceeded := WithBudget(ctx, lim.MaxBytes)

	gitDir, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), ".objects-")
	if err != nil {
		return "", err
	}
	defer func() {
		if rerr := rmtree.RemoveAll(gitDir); rerr != nil && err == nil {
			err = fmt.Errorf("remove object store: %w", rerr)
		}
	}()
	var (
		repo   *git.Repository
		remote *git.Remote
	)
	initStore := func() error {
		if err := rmtree.RemoveAll(gitDir); err != nil {
			return err
		}
		var err error
		if repo, err = git.PlainInit(gitDir, true); err != nil {
			return fmt.Errorf("init object store: %w", err)
		}
		if remote, err = repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{src.CloneURL}}); err != nil {
			return fmt.Errorf("init object store: %w", err)
		}
		return nil
	}
	if err := initStore(); err != nil {
		return "", err
	}
	var auth transport.AuthMethod
	if src.Username != "" || src.Password != "" {
		user := src.Username
		if user == "" {
			user = "x-access-token"
		}
		auth = &githttp.BasicAuth{Username: user, Password: src.Password}
	}
	fetch := func(spec string, depth int) error {
		err := remote.FetchContext(ctx, &git.FetchOptions{RefSpecs: []config.RefSpec{config.RefSpec(spec)}, Depth: depth, Auth: auth, Tags: git.NoTags})
		if errors.Is(err, git.NoErrAlreadyUpToDate) {
			err = nil
		}
		if err == nil && exceeded() {
			err = ErrTooLarge
		}
		return err
	}
	const local = "refs/heads/fetched"
	var commit *object.Commit
	if src.Commit != "" {
		if !plumbing.IsHash(src.Commit) {
			return "", fmt.Errorf("%w: %q is not a commit hash", ErrNotFound, src.Commit)
		}
		err := fetch(src.Commit+":"+local, 1)
		switch {
		case err == nil:
			commit, err = repo.CommitObject(plumbing.NewHash(src.Commit))
			if err != nil {
				return "", fmt.Errorf("%w: commit %s", ErrNotFound, src.Commit)
			}
		case errors.Is(err, git.ErrExactSHA1NotSupported):
			// Fall back to the branch below.
		default:
			return "", classify(ctx, exceeded, err)
		}
	}
	if commit == nil {
		branch := "HEAD"
		if src.Branch != "" {
			branch = plumbing.NewBranchReferenceName(src.Branch).String()
		}
		if err := fetch("+"+branch+":"+local, 1); err != nil {
			return "", classify(ctx, exceeded, err)
		}
		ref, err := repo.Reference(local, true)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrNotFound, err)
		}
		want := ref.Hash()
		if src.Commit != "" && want.String() != src.Commit {
			// The branch moved since the commit was recorded: fetch its
			// history into a fresh store (go-git cannot deepen a shallow
			// clone reliably).
			if err := initStore(); err != nil {
				return "", err
			}
			if err := fetch("+"+branch+":"+local, 0); err != nil {
				return "", classify(ctx, exceeded, err)
			}
			want = plumbing.NewHash(src.Commit)
		}
		commit, err = repo.CommitObject(want)
		if err != nil {
			return "", fmt.Errorf("%w: commit %s", ErrNotFound, want)
		}
	}
	tree, err := commit.Tree()
	if err != nil {
		return "", fmt.Errorf("%w: tree of commit %s: %v", ErrNotFound, commit.Hash, err)
	}
	files, err := ListFiles(ctx, tree, lim)
	if err != nil {
		return "", err
	}
	if err := writeFiles(ctx, repo, files, dir, lim); err != nil {
		return "", err
	}
	return commit.Hash.String(), nil
}

// File is one regular file of a commit's tree.
type File struct {
	Path string
	Hash plumbing.Hash
	Mode filemode.FileMode
	Size int64
}

// ListFiles lists the regular files of tree, reading tree objects and blob
// headers only, under lim's file count and declared-size budget (ErrTooLarge)
// and ctx (ErrTimeout). Links and submodules are left out.
func ListFiles(ctx context.Context, tree *object.Tree, lim Limits) ([]File, error) {
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	var files []File
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return nil, ctxErr(err)
		}
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("walk tree: %w", err)
		}
		if entry.Mode != filemode.Regular && entry.Mode != filemode.Executable && entry.Mode != filemode.Deprecated {
			continue
		}
		if len(files) >= lim.MaxFiles {
			return nil, fmt.Errorf("%w: more than %d files", ErrTooLarge, lim.MaxFiles)
		}
		size, err := tree.Size(name)
		if err != nil {
			return nil, fmt.Errorf("size of %s: %w", name, err)
		}
		total += size
		if total > lim.MaxTreeBytes {
			return nil, fmt.Errorf("%w: files add up to more than %d bytes", ErrTooLarge, lim.MaxTreeBytes)
		}
		files = append(files, File{Path: name, Hash: entry.Hash, Mode: entry.Mode, Size: size})
	}
}

func ctxErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrTimeout
	}
	return err
}

// writeFiles writes files (already within the budgets) under dir; blobs
// larger than MaxFileBytes are skipped without being read. Writing goes
// through an os.Root, so no name can leave dir, and copies stop as soon as
// ctx ends.
func writeFiles(ctx context.Context, repo *git.Repository, files []File, dir string, lim Limits) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return ctxErr(err)
		}
		if f.Size > lim.MaxFileBytes {
			continue
		}
		if d := path.Dir(f.Path); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("create %s: %w", d, err)
			}
		}
		if err := writeBlob(ctx, repo, root, f); err != nil {
			return err
		}
	}
	return nil
}

func writeBlob(ctx context.Context, repo *git.Repository, root *os.Root, f File) error {
	blob, err := repo.BlobObject(f.Hash)
	if err != nil {
		return fmt.Errorf("read %s: %w", f.Path, err)
	}
	r, err := blob.Reader()
	if err != nil {
		return fmt.Errorf("read %s: %w", f.Path, err)
	}
	defer func() { _ = r.Close() }()
	perm := os.FileMode(0o644)
	if f.Mode == filemode.Executable {
		perm = 0o755
	}
	out, err := root.OpenFile(f.Path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	if err != nil {
		return fmt.Errorf("create %s: %w", f.Path, err)
	}
	_, err = io.Copy(out, io.LimitReader(ctxReader{ctx, r}, f.Size))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctxErr(ctx.Err())
		}
		return fmt.Errorf("write %s: %w", f.Path, err)
	}
	return nil
}

// ctxReader fails reads once ctx has ended.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
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
		strings.Contains(err.Error(), "couldn't find remote ref"), strings.Contains(err.Error(), "not our ref"):
		return ErrNotFound
	}
	return fmt.Errorf("fetch repository: %w", err)
}
