package gitsrc

import (
	"context"
	"errors"
	"fmt"
	"os"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/vulnscan/vulnscan/pkg/gitfetch"
	"github.com/vulnscan/vulnscan/pkg/rmtree"
)

// Change is the size of a pull request: the commit it starts from and the
// files and lines (added plus deleted) changed from there to the head.
type Change struct {
	// Base is the merge base of the head and the base (base_commit, or the
	// tip of base_branch): the commit the git host's pull request diff
	// starts from, so commits that landed on the base branch after the pull
	// request branched off are not counted as part of it.
	Base         string
	Files, Lines int
}

// Change fetches headBranch and baseBranch (their histories, within the
// clone's byte and time budget) and measures the change from the base to
// head, the commit already estimated. baseCommit, when set, must be in
// baseBranch's history and is used instead of the branch's tip. Every
// failure the caller can fix is an *Error naming the base.
func (f *Fetcher) Change(ctx context.Context, r Remote, headBranch, head, baseBranch, baseCommit string) (Change, error) {
	ctx, cancel := context.WithTimeout(ctx, f.Limits.Timeout)
	defer cancel()
	ctx, exceeded := gitfetch.WithBudget(ctx, f.Limits.MaxBytes)
	dir, err := os.MkdirTemp(f.TempDir, "change-")
	if err != nil {
		return Change{}, err
	}
	defer func() { _ = rmtree.RemoveAll(dir) }()
	repo, err := git.PlainInit(dir, true)
	if err != nil {
		return Change{}, err
	}
	rem, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{r.URL}})
	if err != nil {
		return Change{}, err
	}
	specs := []config.RefSpec{
		config.RefSpec(fmt.Sprintf("+refs/heads/%s:refs/remotes/origin/%s", headBranch, headBranch)),
		config.RefSpec(fmt.Sprintf("+refs/heads/%s:refs/remotes/origin/%s", baseBranch, baseBranch)),
	}
	err = rem.FetchContext(ctx, &git.FetchOptions{Auth: auth(r), RefSpecs: specs, Tags: git.NoTags})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		if errors.Is(err, plumbing.ErrReferenceNotFound) || isMissingRef(err) {
			return Change{}, fail("base branch %q not found in the repository", baseBranch)
		}
		return Change{}, explain(err, exceeded, f.Limits)
	}
	ref, err := repo.Reference(plumbing.NewRemoteReferenceName("origin", baseBranch), true)
	if err != nil {
		return Change{}, fail("base branch %q not found in the repository", baseBranch)
	}
	tip, err := repo.CommitObject(ref.Hash())
	if err != nil {
		return Change{}, explain(err, exceeded, f.Limits)
	}
	headCommit, err := repo.CommitObject(plumbing.NewHash(head))
	if err != nil {
		return Change{}, fail("branch %q moved while it was being estimated; estimate again", headBranch)
	}
	base := tip
	if baseCommit != "" {
		c, err := repo.CommitObject(plumbing.NewHash(baseCommit))
		if err != nil {
			return Change{}, fail("base commit %s is not in the history of base branch %q", baseCommit, baseBranch)
		}
		if ok, err := c.IsAncestor(tip); err != nil {
			return Change{}, explain(err, exceeded, f.Limits)
		} else if !ok && c.Hash != tip.Hash {
			return Change{}, fail("base commit %s is not in the history of base branch %q", baseCommit, baseBranch)
		}
		base = c
	}
	bases, err := headCommit.MergeBase(base)
	if err != nil {
		return Change{}, explain(err, exceeded, f.Limits)
	}
	if len(bases) == 0 {
		return Change{}, fail("branch %q and base branch %q share no history", headBranch, baseBranch)
	}
	mb := bases[0]
	if mb.Hash == headCommit.Hash {
		return Change{}, fail("the change is empty: the head of branch %q is already in base branch %q", headBranch, baseBranch)
	}
	files, lines, err := diffSize(ctx, mb, headCommit)
	if err != nil {
		return Change{}, explain(err, exceeded, f.Limits)
	}
	return Change{Base: mb.Hash.String(), Files: files, Lines: lines}, nil
}

func isMissingRef(err error) bool {
	var nf git.NoMatchingRefSpecError
	return errors.As(err, &nf)
}

// diffSize counts the files changed from base to head and the lines added
// plus deleted in them (binary files count as changed files with no lines).
func diffSize(ctx context.Context, base, head *object.Commit) (int, int, error) {
	bt, err := base.Tree()
	if err != nil {
		return 0, 0, err
	}
	ht, err := head.Tree()
	if err != nil {
		return 0, 0, err
	}
	changes, err := object.DiffTreeWithOptions(ctx, bt, ht, object.DefaultDiffTreeOptions)
	if err != nil {
		return 0, 0, err
	}
	patch, err := changes.PatchContext(ctx)
	if err != nil {
		return 0, 0, err
	}
	lines := 0
	for _, st := range patch.Stats() {
		lines += st.Addition + st.Deletion
	}
	return len(changes), lines, nil
}
