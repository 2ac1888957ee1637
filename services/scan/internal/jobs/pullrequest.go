package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/vulnscan/vulnscan/pkg/engine"
	"github.com/vulnscan/vulnscan/pkg/gitfetch"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle"
	"github.com/vulnscan/vulnscan/services/scan/internal/prdiff"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// A pull request (PR) scan analyses the head of each repository whole, so
// flows across unchanged files are found, and then keeps a finding only if
//
//  1. it lies in a repository whose estimation entry names a base (in a PR
//     scan, repositories without a base are context only; in a full scan
//     they are reported whole as always);
//  2. it touches the change: its lines, or a step of its dataflow path, are
//     among the head lines added or modified since the base (prdiff); and
//  3. it is not present at the base: the engine runs again on the base
//     trees (the other repositories unchanged) and every finding whose
//     fingerprint the base also produces is dropped. Fingerprints leave
//     line numbers out, so a flaw that only moved is not new.
//
// The base run is skipped when no finding survives 1 and 2. Live targets
// are not probed in a PR scan: they are not part of the change.

// prRepo is a repository of a scan with what is needed to compare it with
// its base.
type prRepo struct {
	repo engine.Repo
	src  *estimationv1.RepoSource
	url  string // as named in the scan, for messages
}

func (p prRepo) hasBase() bool { return p.src.GetBaseBranch() != "" }

// newInChange filters the head's findings of a scan down to those its pull
// request entries introduce (see above). dir is the scan's scratch directory.
func (w *RunScanWorker) newInChange(ctx context.Context, log *slog.Logger, sc store.Scan, repos []prRepo, dir string, fs []engine.Finding) ([]engine.Finding, error) {
	full := sc.ScanType != lifecycle.ScanTypePR
	bases := map[string]string{}           // repository key → base tree
	changes := map[string]prdiff.Changes{} // repository key → changed lines
	for i, r := range repos {
		if !r.hasBase() {
			continue
		}
		if r.src.GetBaseCommit() == "" {
			return nil, permanent{fmt.Sprintf("Repository %s has no resolved base commit in the estimation", r.url)}
		}
		target := filepath.Join(dir, fmt.Sprintf("base-%02d", i))
		if err := os.MkdirAll(target, 0o700); err != nil {
			return nil, err
		}
		if err := w.fetchAt(ctx, r.src, r.url, r.src.GetBaseBranch(), r.src.GetBaseCommit(), target); err != nil {
			return nil, err
		}
		ch, err := prdiff.Compare(ctx, target, r.repo.Dir, maxDiffFileBytes)
		if err != nil {
			return nil, fmt.Errorf("compare %s with its base: %w", r.url, err)
		}
		bases[r.repo.URL], changes[r.repo.URL] = target, ch
	}
	var kept []engine.Finding
	for _, f := range fs {
		ch, pr := changes[f.RepoURL]
		switch {
		case !pr && full:
			kept = append(kept, f)
		case pr && touches(ch, f):
			kept = append(kept, f)
		}
	}
	candidates := 0
	for _, f := range kept {
		if _, pr := changes[f.RepoURL]; pr {
			candidates++
		}
	}
	if candidates == 0 {
		return kept, nil
	}
	in := engine.Input{CustomContext: sc.CustomContext}
	for _, r := range repos {
		br := r.repo
		if b, ok := bases[br.URL]; ok {
			br.Dir, br.CommitSHA = b, r.src.GetBaseCommit()
		}
		in.Repos = append(in.Repos, br)
	}
	res, err := w.Engine.Run(ctx, in, nil)
	if err != nil {
		return nil, fmt.Errorf("engine on the base: %w", err)
	}
	atBase := map[string]bool{}
	for _, f := range res.Findings {
		atBase[f.Fingerprint] = true
	}
	out := kept[:0]
	for _, f := range kept {
		if _, pr := changes[f.RepoURL]; pr && atBase[f.Fingerprint] {
			continue
		}
		out = append(out, f)
	}
	log.InfoContext(ctx, "pull request findings", "touching_change", candidates, "new", len(out))
	return out, nil
}

// maxDiffFileBytes bounds the files compared line by line; the engine reads
// files up to 1 MiB, so larger ones carry no findings.
const maxDiffFileBytes = 1 << 20

// touches tells whether f lies on, or flows through, a changed line.
func touches(ch prdiff.Changes, f engine.Finding) bool {
	if ch.TouchesRange(f.AffectedFile, f.StartLine, f.EndLine) {
		return true
	}
	for _, l := range f.Path {
		if ch.Touches(l.File, l.Line) {
			return true
		}
	}
	return false
}

// fetchAt writes the tree of commit (reached through branch) of a git
// source into target, mapping the fetcher's errors to the scan's messages.
func (w *RunScanWorker) fetchAt(ctx context.Context, src *estimationv1.RepoSource, url, branch, commit, target string) error {
	got, err := gitfetch.Checkout(ctx, gitfetch.Source{CloneURL: src.GetCloneUrl(), Username: src.GetUsername(), Password: src.GetPassword(),
		Branch: branch, Commit: commit}, target, w.Fetch)
	switch {
	case errors.Is(err, gitfetch.ErrTooLarge):
		return permanent{fmt.Sprintf("Repository %s exceeds the size limit", url)}
	case errors.Is(err, gitfetch.ErrTimeout):
		return permanent{fmt.Sprintf("Repository %s could not be fetched within %s", url, w.Fetch.Timeout)}
	case errors.Is(err, gitfetch.ErrNotFound):
		return permanent{fmt.Sprintf("Commit %s of %s is no longer available", commit, url)}
	case errors.Is(err, gitfetch.ErrAuth):
		return permanent{fmt.Sprintf("Repository %s refused the stored credentials", url)}
	case err != nil:
		return fmt.Errorf("checkout %s: %w", url, err)
	}
	if got != commit {
		return permanent{fmt.Sprintf("Repository %s could not be checked out at the estimated commit", url)}
	}
	return nil
}
