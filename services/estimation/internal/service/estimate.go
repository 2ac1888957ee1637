package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/archive"
	"github.com/vulnscan/vulnscan/pkg/rmtree"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	"github.com/vulnscan/vulnscan/services/estimation/internal/detect"
	"github.com/vulnscan/vulnscan/services/estimation/internal/gitsrc"
	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
)

// DefaultOrgBusySnooze is Service.OrgBusySnooze's default.
const DefaultOrgBusySnooze = 5 * time.Second

// Run estimates every pending repository of an estimation and ends it; the
// Estimate job runs it. Errors returned are transient (database, auth
// service); a repository's own failure is recorded on it. Each repository's
// outcome is saved as soon as it is known, so a retried or rescued job
// (after a crash) continues with the repositories still pending.
func (s *Service) Run(ctx context.Context, id string) error {
	e, err := s.Store.GetEstimation(ctx, "", id)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(fmt.Errorf("estimation %s does not exist", id))
	}
	if err != nil {
		return err
	}
	if e.Status.Terminal() {
		return nil
	}
	started, err := s.Store.StartRunning(ctx, id, e.OrgID, s.MaxRunningPerOrg)
	if err != nil {
		return err
	}
	if !started {
		// Fair scheduling: the organization already runs its share of
		// estimations, so this job steps aside (a snooze uses no attempt)
		// and the workers serve other organizations meanwhile.
		return river.JobSnooze(cmp.Or(s.OrgBusySnooze, DefaultOrgBusySnooze))
	}
	par := max(s.Parallel, 1)
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for _, r := range e.Repos {
		if r.Status != vocab.EstimationPending {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res, err := s.estimateRepo(ctx, e, r)
			if err == nil {
				err = s.Store.SaveRepoResult(ctx, id, res)
			}
			if err != nil {
				mu.Lock()
				firstErr = errors.Join(firstErr, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return s.Store.Finish(ctx, id)
}

// estimateRepo resolves, detects and prices one repository. A returned
// error is transient; a repository that cannot be estimated comes back
// with status "failed" and its error.
func (s *Service) estimateRepo(ctx context.Context, e store.Estimation, r store.Repo) (store.Repo, error) {
	r.Branch = r.RequestedBranch
	var res *detect.Result
	var err error
	switch r.Source {
	case string(vocab.SourceUpload):
		res, err = s.estimateUpload(ctx, e, &r)
	default:
		res, err = s.estimateGit(ctx, e, &r)
	}
	var ge *gitsrc.Error
	if errors.As(err, &ge) {
		r.Status, r.Error = vocab.EstimationFailed, ge.Msg
		return r, nil
	}
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			r.Status, r.Error = vocab.EstimationFailed, "estimation timed out"
			return r, nil
		}
		return r, err
	}
	r.Status, r.Applications, r.Credits = vocab.EstimationCompleted, res.Apps, res.Credits
	if r.IsPR() {
		r.Credits = PRCredits(res.Credits, r.ChangedLines)
	}
	return r, nil
}

// PRLinesPerCredit is how many changed lines one credit of a pull request
// scan covers beyond the first.
const PRLinesPerCredit = 1000

// PRCredits prices a pull request (PR) scan of a repository whose full scan
// costs full credits and whose change adds and deletes changedLines lines:
// 1 + changedLines/PRLinesPerCredit, at least 1 and at most full-1, so it
// always costs less than the full scan of the same commit, except that a
// repository whose full scan costs the minimum of 1 credit costs 1 either
// way. A repository in which nothing is detected costs 0, as in full.
func PRCredits(full, changedLines int) int {
	if full <= 0 {
		return 0
	}
	c := 1 + changedLines/PRLinesPerCredit
	return max(1, min(c, full-1))
}

func (s *Service) estimateGit(ctx context.Context, e store.Estimation, r *store.Repo) (*detect.Result, error) {
	remote := gitsrc.Remote{URL: r.RepoURL}
	defaultBranch := ""
	if r.Source == string(vocab.SourceConnected) {
		c, err := s.Auth.GetConnectedRepo(ctx, &authv1.GetConnectedRepoRequest{OrgId: e.OrgID, Url: r.RepoURL})
		if status.Code(err) == codes.NotFound {
			return nil, &gitsrc.Error{Msg: "repository is no longer connected to the organization"}
		}
		if err != nil {
			return nil, fmt.Errorf("look up connected repository: %w", err)
		}
		if c.GetCloneUrl() != "" {
			remote.URL = c.GetCloneUrl()
		}
		if c.GetToken() != "" {
			remote.Username, remote.Password = "x-access-token", c.GetToken()
		}
		defaultBranch = c.GetDefaultBranch()
	}
	if err := ValidateRepoURL(s.Guard, "clone URL", remote.URL); err != nil {
		return nil, &gitsrc.Error{Msg: strings.TrimPrefix(err.Error(), "clone URL ")}
	}
	r.CloneURL = remote.URL
	branch, sha, err := s.Fetcher.Resolve(ctx, remote, r.RequestedBranch, defaultBranch)
	if err != nil {
		return nil, err
	}
	r.Branch, r.CommitSHA = branch, sha
	key := vocab.RepoKey(r.RepoURL)
	if cached, err := s.Store.CachedResult(ctx, key, sha); err != nil {
		return nil, err
	} else if cached != nil {
		r.FromCache = true
		return cached, s.sizeChange(ctx, remote, r)
	}
	snap, err := s.Fetcher.Clone(ctx, remote, branch)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := snap.Close(); err != nil {
			s.Log.ErrorContext(ctx, "clone directory could not be removed", "error", err.Error())
		}
	}()
	r.CommitSHA = snap.Commit
	res := detect.Analyze(snap, repoName(r.RepoURL))
	if err := s.Store.CacheResult(ctx, key, snap.Commit, res); err != nil {
		return nil, err
	}
	if err := s.sizeChange(ctx, remote, r); err != nil {
		return nil, err
	}
	return &res, nil
}

// sizeChange resolves the base of a pull request entry and measures the
// change from it to the estimated head commit.
func (s *Service) sizeChange(ctx context.Context, remote gitsrc.Remote, r *store.Repo) error {
	if !r.IsPR() {
		return nil
	}
	if r.BaseBranch == r.Branch {
		return &gitsrc.Error{Msg: fmt.Sprintf("base branch %q is the branch being scanned; name another base_branch", r.BaseBranch)}
	}
	ch, err := s.Fetcher.Change(ctx, remote, r.Branch, r.CommitSHA, r.BaseBranch, r.RequestedBaseCommit)
	if err != nil {
		return err
	}
	r.BaseCommit, r.ChangedFiles, r.ChangedLines = ch.Base, ch.Files, ch.Lines
	return nil
}

func (s *Service) estimateUpload(ctx context.Context, e store.Estimation, r *store.Repo) (*detect.Result, error) {
	id := strings.TrimPrefix(r.RepoURL, "upload://")
	u, err := s.Store.GetUpload(ctx, nil, e.OrgID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &gitsrc.Error{Msg: "upload not found"}
	}
	if err != nil {
		return nil, err
	}
	r.CommitSHA = u.ContentHash
	key := vocab.RepoKey(r.RepoURL)
	if cached, err := s.Store.CachedResult(ctx, key, u.ContentHash); err != nil {
		return nil, err
	} else if cached != nil {
		r.FromCache = true
		return cached, nil
	}
	dir, err := os.MkdirTemp(s.TempDir, "unpack-")
	if err != nil {
		return nil, err
	}
	defer s.removeScratch(ctx, dir)
	f, err := os.Create(dir + ".archive")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }()
	br, err := s.Bucket.NewReader(ctx, u.BlobKey, nil)
	if err != nil {
		return nil, fmt.Errorf("open upload blob: %w", err)
	}
	n, err := io.Copy(f, br)
	_ = br.Close()
	if err != nil {
		return nil, fmt.Errorf("read upload blob: %w", err)
	}
	if _, err := archive.Extract(f, n, u.ContentType, dir, s.ArchiveLimits); err != nil {
		// An archive that cannot be unpacked will not unpack on a retry
		// either (the upload is immutable): the repository fails for good.
		if errors.Is(err, archive.ErrUnsafe) {
			return nil, &gitsrc.Error{Msg: err.Error()}
		}
		s.Log.ErrorContext(ctx, "unpacking an upload failed", "upload_id", u.ID, "error", err.Error())
		return nil, &gitsrc.Error{Msg: "archive could not be unpacked"}
	}
	src, err := detect.NewDirSource(dir)
	if err != nil {
		return nil, err
	}
	res := detect.Analyze(src, repoName(r.RepoURL))
	if err := s.Store.CacheResult(ctx, key, u.ContentHash, res); err != nil {
		return nil, err
	}
	return &res, nil
}

// removeScratch removes a scratch directory whatever its depth and reports
// a failure loudly: a directory left behind is disk lost until an operator
// removes it.
func (s *Service) removeScratch(ctx context.Context, dir string) {
	if err := rmtree.RemoveAll(dir); err != nil {
		s.Log.ErrorContext(ctx, "scratch directory could not be removed", "error", err.Error())
	}
}
