package service

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/validate"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
)

var badBranch = regexp.MustCompile(`[\x00-\x20~^:?*\[\\\x7f]|\.\.|@\{|//|^[-/.]|[/.]$|\.lock$`)

// ValidateBranch checks a git branch name.
func ValidateBranch(field, b string) error {
	if b == "" {
		return nil
	}
	if len(b) > 255 || badBranch.MatchString(b) {
		return apierr.Invalid("%s is not a valid branch name", field)
	}
	return nil
}

// ValidateRepoURL checks an HTTPS repository URL: absolute, no
// credentials, and not a literal non-public address (names are checked
// again, after DNS, on every connection of the clone).
func ValidateRepoURL(guard *netguard.Guard, field, raw string) error {
	if raw == "" {
		return apierr.Invalid("%s is required", field)
	}
	u, err := netguard.ParseURL(raw, "https")
	if err != nil {
		return apierr.Invalid("%s %s", field, err.Error())
	}
	host := strings.Trim(u.Hostname(), "[]")
	if ip, ok := netguard.ParseIPLiteral(host); ok && !guard.Allowed(ip) {
		return apierr.Invalid("%s must not point to a non-public address", field)
	}
	return nil
}

var commitHash = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)

// validateBase checks the pull request fields of one entry (f is its field
// path, e.g. "repos[0]"). What only the repository can tell (the base
// branch exists, base_commit is in its history, the change is not empty)
// is checked by the estimation job and fails the entry with its error, as
// an unknown branch does.
func validateBase(f string, r *estimationv1.RepoRef) error {
	base, commit := r.GetBaseBranch(), r.GetBaseCommit()
	if r.GetSource() == string(vocab.SourceUpload) && (base != "" || commit != "" || r.GetPullRequest() != 0) {
		field := "base_branch"
		switch {
		case base != "":
		case commit != "":
			field = "base_commit"
		default:
			field = "pull_request"
		}
		return apierr.Invalid("%s.%s is not supported for uploads: an archive has no history to compare with; scan the archive in full", f, field)
	}
	if commit != "" && base == "" {
		return apierr.Invalid("%s.base_commit requires %s.base_branch", f, f)
	}
	if r.GetPullRequest() != 0 && base == "" {
		return apierr.Invalid("%s.pull_request requires %s.base_branch", f, f)
	}
	if r.GetPullRequest() < 0 {
		return apierr.Invalid("%s.pull_request must be a positive pull request number", f)
	}
	if err := ValidateBranch(f+".base_branch", base); err != nil {
		return err
	}
	if commit != "" && !commitHash.MatchString(commit) {
		return apierr.Invalid("%s.base_commit must be a 40-character hexadecimal commit hash", f)
	}
	if base != "" && base == r.GetBranch() {
		return apierr.Invalid("%s.base_branch must differ from %s.branch", f, f)
	}
	return nil
}

func (s *Public) CreateCostEstimation(ctx context.Context, req *estimationv1.CreateCostEstimationRequest) (*estimationv1.CreateCostEstimationResponse, error) {
	p, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.MaxLen("name", req.GetName(), 200); err != nil {
		return nil, err
	}
	repos := req.GetRepos()
	switch {
	case len(repos) == 0:
		return nil, apierr.Invalid("repos must contain at least one repository")
	case len(repos) > MaxRepos:
		return nil, apierr.Invalid("repos must contain at most %d repositories", MaxRepos)
	}
	e := store.Estimation{ID: uuid.NewString(), OrgID: p.OrgID, UserID: p.UserID, Name: strings.TrimSpace(req.GetName())}
	var uploadIDs []string
	for i, r := range repos {
		f := fmt.Sprintf("repos[%d]", i)
		if r == nil {
			return nil, apierr.Invalid("%s must be an object", f)
		}
		if err := validate.OneOf(f+".source", r.GetSource(), vocab.RepoSources.Strings()...); err != nil {
			return nil, err
		}
		if r.GetCommitSha() != "" {
			return nil, apierr.Invalid("%s.commit_sha is set by the service and must not be given", f)
		}
		if err := ValidateBranch(f+".branch", r.GetBranch()); err != nil {
			return nil, err
		}
		if err := validateBase(f, r); err != nil {
			return nil, err
		}
		raw := strings.TrimSpace(r.GetRepoUrl())
		switch r.GetSource() {
		case string(vocab.SourceUpload):
			id, ok := strings.CutPrefix(raw, "upload://")
			if raw == "" {
				return nil, apierr.Invalid("%s.repo_url is required", f)
			}
			if !ok || validate.UUID("id", id) != nil {
				return nil, apierr.Invalid("%s.repo_url must be upload://<upload id> for an upload", f)
			}
			uploadIDs = append(uploadIDs, id)
		default:
			if err := ValidateRepoURL(s.Guard, f+".repo_url", raw); err != nil {
				return nil, err
			}
		}
		e.Repos = append(e.Repos, store.Repo{Source: r.GetSource(), RepoURL: raw, RequestedBranch: r.GetBranch(),
			BaseBranch: r.GetBaseBranch(), RequestedBaseCommit: strings.ToLower(r.GetBaseCommit()), PullRequest: int(r.GetPullRequest())})
	}
	if len(uploadIDs) > 0 {
		exist, err := s.Store.UploadsExist(ctx, p.OrgID, uploadIDs)
		if err != nil {
			return nil, err
		}
		for i, r := range e.Repos {
			if r.Source == string(vocab.SourceUpload) && !exist[strings.TrimPrefix(r.RepoURL, "upload://")] {
				return nil, apierr.Invalid("repos[%d].repo_url is not an upload of the organization", i)
			}
		}
	}
	for i, r := range e.Repos {
		if r.Source != string(vocab.SourceConnected) {
			continue
		}
		_, err := s.Auth.GetConnectedRepo(ctx, &authv1.GetConnectedRepoRequest{OrgId: p.OrgID, Url: r.RepoURL})
		if status.Code(err) == codes.NotFound {
			return nil, apierr.Invalid("repos[%d].repo_url is not a connected repository of the organization", i)
		}
		if err != nil {
			return nil, fmt.Errorf("look up connected repository: %w", err)
		}
	}
	err = db.InTx(ctx, s.Store.Pool, func(tx pgx.Tx) error {
		var err error
		if e, err = s.Store.CreateEstimation(ctx, tx, e); err != nil {
			return err
		}
		if e.TaskID, err = s.Enqueue(ctx, tx, e.ID); err != nil {
			return fmt.Errorf("enqueue estimation: %w", err)
		}
		return s.Store.SetTaskID(ctx, tx, e.ID, e.TaskID)
	})
	if err != nil {
		return nil, err
	}
	return &estimationv1.CreateCostEstimationResponse{Estimation: estimationProto(e)}, nil
}

func (s *Public) ListCostEstimations(ctx context.Context, req *estimationv1.ListCostEstimationsRequest) (*estimationv1.ListCostEstimationsResponse, error) {
	p, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	_, limit32, err := vocab.Page(nil, req.Limit, vocab.DefaultEstimationPageLimit)
	if err != nil {
		return nil, err
	}
	limit, offset := int(limit32), 0
	if req.Offset != nil {
		if req.GetOffset() < 0 {
			return nil, apierr.Invalid("offset must be at least 0")
		}
		offset = int(req.GetOffset())
	}
	list, total, err := s.Store.ListEstimations(ctx, p.OrgID, limit, offset)
	if err != nil {
		return nil, err
	}
	out := &estimationv1.ListCostEstimationsResponse{Data: []*estimationv1.CostEstimation{}, Total: int32(total)}
	for _, e := range list {
		out.Data = append(out.Data, estimationProto(e))
	}
	return out, nil
}

func (s *Public) GetCostEstimation(ctx context.Context, req *estimationv1.GetCostEstimationRequest) (*estimationv1.GetCostEstimationResponse, error) {
	p, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	e, err := s.Store.GetEstimation(ctx, p.OrgID, req.GetId())
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("Cost estimation not found")
	}
	if err != nil {
		return nil, err
	}
	return &estimationv1.GetCostEstimationResponse{Estimation: estimationProto(e)}, nil
}
