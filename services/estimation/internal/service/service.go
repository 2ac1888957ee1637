// Package service implements the estimation service's gRPC APIs: the public
// one (cost estimations, served as REST by the gateway), uploads (streamed
// by the gateway from POST /v1/uploads), the internal one the scan service
// calls (read, claim, release, repository sources), and the estimation
// itself (Run): resolving repositories, detecting their applications and
// pricing them, which the Estimate job of package jobs runs.
package service

import (
	"context"
	"log/slog"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"gocloud.dev/blob"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/vulnscan/vulnscan/pkg/archive"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	"github.com/vulnscan/vulnscan/services/estimation/internal/gitsrc"
	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
)

// Scan types of an estimation entry: "pr" when it names a base.
const (
	ScanTypeFull = "full"
	ScanTypePR   = "pr"
)

// Limits of the API.
const (
	MaxRepos       = 20
	MaxUploadBytes = 100 << 20
)

// Enqueuer inserts the estimation job in the caller's transaction and
// returns the job's identifier.
type Enqueuer func(ctx context.Context, tx pgx.Tx, estimationID string) (string, error)

// Service holds what the APIs and the estimation job share.
type Service struct {
	Store         *store.Store
	Auth          authv1.AuthInternalServiceClient
	Bucket        *blob.Bucket
	Fetcher       *gitsrc.Fetcher
	Guard         *netguard.Guard
	Enqueue       Enqueuer
	Log           *slog.Logger
	TempDir       string
	ArchiveLimits archive.Limits
	Parallel      int
	// UploadQuota bounds each organization's uploads (ESTIMATION_MAX_UPLOADS,
	// ESTIMATION_MAX_UPLOAD_BYTES).
	UploadQuota store.UploadQuota
	// MaxRunningPerOrg bounds the estimations of one organization running at
	// once (ESTIMATION_MAX_RUNNING_PER_ORG; 0: no bound).
	MaxRunningPerOrg int
	// OrgBusySnooze is how long an estimation waits when its organization
	// is at its running limit before it is offered to a worker again
	// (DefaultOrgBusySnooze when zero).
	OrgBusySnooze time.Duration
}

// Public serves EstimationService.
type Public struct {
	estimationv1.UnimplementedEstimationServiceServer
	*Service
}

// Uploads serves UploadService.
type Uploads struct {
	estimationv1.UnimplementedUploadServiceServer
	*Service
}

// Internal serves EstimationInternalService.
type Internal struct {
	estimationv1.UnimplementedEstimationInternalServiceServer
	*Service
}

// repoName is the last path element of a repository URL.
func repoName(raw string) string {
	if id, ok := strings.CutPrefix(raw, "upload://"); ok {
		return "upload-" + id[:min(8, len(id))]
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "app"
	}
	n := path.Base(strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), ".git"))
	if n == "." || n == "/" || n == "" {
		return u.Hostname()
	}
	return n
}

func estimationProto(e store.Estimation) *estimationv1.CostEstimation {
	out := &estimationv1.CostEstimation{
		Id: e.ID, OrganizationId: e.OrgID, UserId: e.UserID, Name: e.Name, TaskId: e.TaskID, Status: string(e.Status),
		TotalCredits: int32(e.TotalCredits), CreatedAt: timestamppb.New(e.CreatedAt), UpdatedAt: timestamppb.New(e.UpdatedAt),
		Repos: []*estimationv1.RepoRef{}, RepoResults: []*estimationv1.RepoResult{},
	}
	for _, r := range e.Repos {
		base := r.BaseCommit
		if base == "" {
			base = r.RequestedBaseCommit
		}
		out.Repos = append(out.Repos, &estimationv1.RepoRef{Source: r.Source, RepoUrl: r.RepoURL, Branch: r.Branch, CommitSha: r.CommitSHA,
			BaseBranch: r.BaseBranch, BaseCommit: base, PullRequest: int32(r.PullRequest)})
		if r.Status == vocab.EstimationPending {
			continue
		}
		rr := &estimationv1.RepoResult{
			RepoUrl: r.RepoURL, Branch: r.Branch, CommitSha: r.CommitSHA, Status: string(r.Status), FromCache: r.FromCache,
			Credits: int32(r.Credits), Error: r.Error, Source: r.Source, Applications: []*estimationv1.Application{},
			ScanType: ScanTypeFull,
		}
		if r.IsPR() {
			rr.ScanType, rr.BaseBranch, rr.BaseCommit = ScanTypePR, r.BaseBranch, r.BaseCommit
			rr.ChangedFiles, rr.ChangedLines = int32(r.ChangedFiles), int32(r.ChangedLines)
		}
		for _, a := range r.Applications {
			rr.Applications = append(rr.Applications, &estimationv1.Application{AppName: a.Name, AppRootPath: a.Root, Architecture: a.Architecture})
		}
		out.RepoResults = append(out.RepoResults, rr)
	}
	return out
}

func ts(t time.Time) *timestamppb.Timestamp { return timestamppb.New(t) }
