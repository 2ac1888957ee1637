// Package gitsrc resolves and fetches git repositories over HTTPS for
// estimation. Every connection goes through a netguard transport, so clones
// never reach non-public addresses, redirects included; a clone is shallow
// (the one commit estimated), bounded in transferred bytes, file count and
// time, and read straight from the object store without a checkout.
package gitsrc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/vulnscan/vulnscan/pkg/gitfetch"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/rmtree"
	"github.com/vulnscan/vulnscan/pkg/wiretext"
	"github.com/vulnscan/vulnscan/services/estimation/internal/detect"
)

// Error is a failure of one repository, with a message for the caller.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func fail(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// Limits bound one clone.
type Limits struct {
	MaxBytes int64 // bytes received from the remote
	MaxFiles int   // files in the estimated commit
	// MaxTreeBytes bounds the files' declared sizes added up, checked from
	// the tree before any file is read (as the scan's checkout does).
	MaxTreeBytes int64
	Timeout      time.Duration // resolution and clone together
}

// Remote is a repository to read.
type Remote struct {
	URL      string // HTTPS
	Username string // basic auth, empty for anonymous
	Password string
}

// Fetcher reads repositories. There is one per process: go-git's HTTPS
// transport is process-wide.
type Fetcher struct {
	Limits  Limits
	TempDir string
}

// New returns a fetcher whose connections go through guard. extraCAFile,
// when set, names PEM certificates trusted in addition to the system's
// (VULNSCAN_EXTRA_CA_FILE; tests use it for their local HTTPS git server).
func New(guard *netguard.Guard, extraCAFile string, lim Limits, tempDir string) (*Fetcher, error) {
	hc, err := gitfetch.NewClient(guard, extraCAFile)
	if err != nil {
		return nil, err
	}
	gitfetch.Install(hc)
	return &Fetcher{Limits: lim, TempDir: tempDir}, nil
}

func auth(r Remote) transport.AuthMethod {
	if r.Username == "" && r.Password == "" {
		return nil
	}
	user := r.Username
	if user == "" {
		user = "x-access-token"
	}
	return &githttp.BasicAuth{Username: user, Password: r.Password}
}

// explain turns a go-git or network error into a message for the caller.
func explain(err error, exceeded func() bool, lim Limits) error {
	var ge *Error
	switch {
	case errors.As(err, &ge):
		return err
	case exceeded != nil && exceeded(), errors.Is(err, gitfetch.ErrTooLarge):
		return fail("repository exceeds the clone size limit of %d MiB", lim.MaxBytes>>20)
	case errors.Is(err, context.DeadlineExceeded):
		return fail("clone timed out after %s", lim.Timeout)
	case errors.Is(err, netguard.ErrBlocked) || strings.Contains(err.Error(), netguard.ErrBlocked.Error()):
		return fail("clone refused: the repository host resolves to a non-public address")
	case errors.Is(err, transport.ErrRepositoryNotFound), errors.Is(err, transport.ErrAuthorizationFailed), errors.Is(err, transport.ErrAuthenticationRequired):
		return fail("repository not found or not accessible with the given credentials")
	case strings.Contains(err.Error(), "redirect") && strings.HasPrefix(lastPart(err.Error()), "http://"):
		// go-git refuses a change of scheme itself and names only the target.
		return fail("clone refused: the repository redirects to a plain-HTTP URL; only HTTPS is followed")
	case strings.Contains(err.Error(), "redirect"):
		return fail("clone refused: %s", lastPart(err.Error()))
	case strings.Contains(err.Error(), "x509") || strings.Contains(err.Error(), "certificate"):
		return fail("TLS certificate of the repository host is not trusted")
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return fail("repository is empty")
	}
	return fail("cannot read the repository: %s", lastPart(err.Error()))
}

func lastPart(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		s = s[i+2:]
	}
	// The end of a clone's error may quote the remote's own message, any
	// bytes it chose: kept as text fit to store, cut at a character.
	return wiretext.Cut(s, 200)
}

// Resolve finds the commit at the tip of branch, or of the remote's default
// branch when branch is empty, and returns the branch used.
func (f *Fetcher) Resolve(ctx context.Context, r Remote, branch, fallbackDefault string) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, f.Limits.Timeout)
	defer cancel()
	ctx, exceeded := gitfetch.WithBudget(ctx, f.Limits.MaxBytes)
	rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{r.URL}})
	refs, err := rem.ListContext(ctx, &git.ListOptions{Auth: auth(r)})
	if err != nil {
		return "", "", explain(err, exceeded, f.Limits)
	}
	heads := map[string]string{}
	head := ""
	for _, ref := range refs {
		switch {
		case ref.Name() == plumbing.HEAD && ref.Type() == plumbing.SymbolicReference:
			head = ref.Target().Short()
		case ref.Name().IsBranch():
			heads[ref.Name().Short()] = ref.Hash().String()
		}
	}
	if branch == "" {
		branch = head
		if branch == "" {
			branch = fallbackDefault
		}
		if branch == "" {
			for _, ref := range refs {
				if ref.Name() == plumbing.HEAD && ref.Type() == plumbing.HashReference {
					for name, h := range heads {
						if h == ref.Hash().String() {
							branch = name
						}
					}
				}
			}
		}
		if branch == "" {
			return "", "", fail("cannot determine the repository's default branch")
		}
	}
	sha, ok := heads[branch]
	if !ok {
		return branch, "", fail("branch %q not found in the repository", branch)
	}
	return branch, sha, nil
}

// Snapshot is the files of one commit, read from a bare shallow clone.
type Snapshot struct {
	Commit string
	tree   *object.Tree
	files  []detect.File
	dir    string
}

// Files lists the regular files of the commit.
func (s *Snapshot) Files() []detect.File { return s.files }

// ReadFile reads at most detect.MaxReadBytes of a file.
func (s *Snapshot) ReadFile(p string) ([]byte, error) {
	f, err := s.tree.File(p)
	if err != nil {
		return nil, err
	}
	rc, err := f.Reader()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	return io.ReadAll(io.LimitReader(rc, detect.MaxReadBytes))
}

// Close removes the clone.
func (s *Snapshot) Close() error { return rmtree.RemoveAll(s.dir) }

// Clone fetches the tip of branch (depth 1) and lists its files. The
// commit may be newer than one resolved earlier if the branch moved;
// Snapshot.Commit is the one read.
func (f *Fetcher) Clone(ctx context.Context, r Remote, branch string) (*Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, f.Limits.Timeout)
	defer cancel()
	ctx, exceeded := gitfetch.WithBudget(ctx, f.Limits.MaxBytes)
	dir, err := os.MkdirTemp(f.TempDir, "clone-")
	if err != nil {
		return nil, err
	}
	s := &Snapshot{dir: dir}
	ok := false
	defer func() {
		if !ok {
			_ = s.Close() // the clone failed already; its error is the one to report
		}
	}()
	repo, err := git.PlainCloneContext(ctx, dir, true, &git.CloneOptions{
		URL: r.URL, Auth: auth(r), ReferenceName: plumbing.NewBranchReferenceName(branch),
		SingleBranch: true, Depth: 1, NoCheckout: true, Tags: git.NoTags,
	})
	if err != nil {
		if errors.Is(err, plumbing.ErrReferenceNotFound) || strings.Contains(err.Error(), "couldn't find remote ref") {
			return nil, fail("branch %q not found in the repository", branch)
		}
		return nil, explain(err, exceeded, f.Limits)
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		return nil, fail("branch %q not found in the repository", branch)
	}
	commit, err := repo.CommitObject(ref.Hash())
	if err != nil {
		return nil, explain(err, exceeded, f.Limits)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, explain(err, exceeded, f.Limits)
	}
	s.Commit, s.tree = commit.Hash.String(), tree
	files, err := gitfetch.ListFiles(ctx, tree, gitfetch.Limits{MaxFiles: f.Limits.MaxFiles, MaxTreeBytes: f.Limits.MaxTreeBytes})
	switch {
	case errors.Is(err, gitfetch.ErrTimeout):
		return nil, fail("clone timed out after %s", f.Limits.Timeout)
	case errors.Is(err, gitfetch.ErrTooLarge):
		return nil, fail("repository has %s", strings.TrimPrefix(err.Error(), gitfetch.ErrTooLarge.Error()+": "))
	case err != nil:
		return nil, explain(err, exceeded, f.Limits)
	}
	for _, fl := range files {
		s.files = append(s.files, detect.File{Path: fl.Path, Size: fl.Size})
	}
	ok = true
	return s, nil
}
