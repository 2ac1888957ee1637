package service_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/fileblob"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/archive"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	"github.com/vulnscan/vulnscan/services/estimation/internal/detect"
	"github.com/vulnscan/vulnscan/services/estimation/internal/service"
	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
)

const connectedURL = "https://github.com/acme/private"

// connected stands in for the auth service's connected repositories: the
// organization has connectedURL only.
type connected struct {
	authv1.AuthInternalServiceClient
}

func (connected) GetConnectedRepo(_ context.Context, in *authv1.GetConnectedRepoRequest, _ ...grpc.CallOption) (*authv1.GetConnectedRepoResponse, error) {
	if in.GetUrl() != connectedURL {
		return nil, status.Error(codes.NotFound, "not connected")
	}
	return &authv1.GetConnectedRepoResponse{Url: connectedURL, CloneUrl: connectedURL + ".git", Token: "tok"}, nil
}

// env is the public and internal estimation APIs on a store of their own,
// called by a user of org; the job queue records what it was given.
type env struct {
	pub    *service.Public
	in     *service.Internal
	up     *service.Uploads
	st     *store.Store
	org    string
	ctx    context.Context
	mu     sync.Mutex
	queued []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	pool := dbtest.Migrated(t, "estimation_service", store.Migrate)
	bucket, err := fileblob.OpenBucket(t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = bucket.Close() })
	guard, err := netguard.New(nil)
	require.NoError(t, err)
	e := &env{st: &store.Store{Pool: pool}, org: uuid.NewString()}
	svc := &service.Service{Store: e.st, Auth: connected{}, Guard: guard, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Bucket: bucket, TempDir: t.TempDir(), ArchiveLimits: archive.DefaultLimits, UploadQuota: store.UploadQuota{MaxCount: 2, MaxBytes: 1 << 30},
		Enqueue: func(_ context.Context, _ pgx.Tx, id string) (string, error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.queued = append(e.queued, id)
			return "est_" + id[:8], nil
		}}
	e.pub, e.in, e.up = &service.Public{Service: svc}, &service.Internal{Service: svc}, &service.Uploads{Service: svc}
	e.ctx = principal.With(context.Background(), principal.Principal{OrgID: e.org, UserID: uuid.NewString()})
	return e
}

// requireStatus checks the gRPC code and message err carries to the gateway.
func requireStatus(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	require.Equal(t, [2]any{code, msg}, [2]any{status.Code(err), status.Convert(err).Message()}, "%v", err)
}

func public(url string) *estimationv1.RepoRef {
	return &estimationv1.RepoRef{Source: "public", RepoUrl: url}
}

func TestCreateCostEstimationFieldErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const commit = "0123456789abcdef0123456789abcdef01234567"
	many := make([]*estimationv1.RepoRef, service.MaxRepos+1)
	for i := range many {
		many[i] = public("https://github.com/acme/app")
	}
	for name, tc := range map[string]struct {
		req *estimationv1.CreateCostEstimationRequest
		msg string
	}{
		"long name":  {&estimationv1.CreateCostEstimationRequest{Name: strings.Repeat("n", 201)}, "name must be at most 200 characters"},
		"no repos":   {&estimationv1.CreateCostEstimationRequest{}, "repos must contain at least one repository"},
		"many repos": {&estimationv1.CreateCostEstimationRequest{Repos: many}, "repos must contain at most 20 repositories"},
		"null repo":  {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{public("https://a.example/x"), nil}}, "repos[1] must be an object"},
		"source": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "git", RepoUrl: "https://a.example/x"}}},
			"repos[0].source must be one of: connected, public, upload"},
		"commit given": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "public", RepoUrl: "https://a.example/x", CommitSha: commit}}},
			"repos[0].commit_sha is set by the service and must not be given"},
		"branch": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "public", RepoUrl: "https://a.example/x", Branch: "a..b"}}},
			"repos[0].branch is not a valid branch name"},
		"upload base": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "upload", RepoUrl: "upload://" + uuid.NewString(), PullRequest: 3}}},
			"repos[0].pull_request is not supported for uploads: an archive has no history to compare with; scan the archive in full"},
		"commit without base": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "public", RepoUrl: "https://a.example/x", BaseCommit: commit}}},
			"repos[0].base_commit requires repos[0].base_branch"},
		"pr without base": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "public", RepoUrl: "https://a.example/x", PullRequest: 7}}},
			"repos[0].pull_request requires repos[0].base_branch"},
		"negative pr": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "public", RepoUrl: "https://a.example/x", BaseBranch: "main", PullRequest: -1}}},
			"repos[0].pull_request must be a positive pull request number"},
		"bad base commit": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "public", RepoUrl: "https://a.example/x", BaseBranch: "main", BaseCommit: "abc"}}},
			"repos[0].base_commit must be a 40-character hexadecimal commit hash"},
		"base is branch": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "public", RepoUrl: "https://a.example/x", Branch: "dev", BaseBranch: "dev"}}},
			"repos[0].base_branch must differ from repos[0].branch"},
		"upload url": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "upload", RepoUrl: "https://a.example/x"}}},
			"repos[0].repo_url must be upload://<upload id> for an upload"},
		"upload empty": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "upload"}}}, "repos[0].repo_url is required"},
		"upload unknown": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "upload", RepoUrl: "upload://" + uuid.NewString()}}},
			"repos[0].repo_url is not an upload of the organization"},
		"url missing":  {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{{Source: "public"}}}, "repos[0].repo_url is required"},
		"private host": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{public("https://169.254.169.254/x")}}, "repos[0].repo_url must not point to a non-public address"},
		"not connected": {&estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{public("https://a.example/x"), {Source: "connected", RepoUrl: "https://github.com/acme/other"}}},
			"repos[1].repo_url is not a connected repository of the organization"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := e.pub.CreateCostEstimation(e.ctx, tc.req)
			requireStatus(t, err, codes.InvalidArgument, tc.msg)
		})
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	require.Empty(t, e.queued, "no refused request queued an estimation")
}

// TestEstimationLifecycle: a created estimation is stored pending with its
// job's id, read back by the public and internal APIs, and can be claimed
// by one scan once it is priced.
func TestEstimationLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	created, err := e.pub.CreateCostEstimation(e.ctx, &estimationv1.CreateCostEstimationRequest{Name: "  q3 audit ", Repos: []*estimationv1.RepoRef{
		{Source: "public", RepoUrl: " https://github.com/acme/app ", Branch: "main"},
		{Source: "connected", RepoUrl: connectedURL, Branch: "dev", BaseBranch: "main", PullRequest: 12},
	}})
	require.NoError(t, err)
	est := created.GetEstimation()
	require.Equal(t, "q3 audit", est.GetName())
	require.Equal(t, "pending", est.GetStatus())
	require.Equal(t, "est_"+est.GetId()[:8], est.GetTaskId())
	require.Equal(t, e.org, est.GetOrganizationId())
	require.Len(t, est.GetRepos(), 2)
	require.Equal(t, "https://github.com/acme/app", est.GetRepos()[0].GetRepoUrl(), "the URL is trimmed")
	require.Equal(t, int32(12), est.GetRepos()[1].GetPullRequest())
	require.Empty(t, est.GetRepoResults(), "no results while pending")
	e.mu.Lock()
	require.Equal(t, []string{est.GetId()}, e.queued)
	e.mu.Unlock()

	got, err := e.pub.GetCostEstimation(e.ctx, &estimationv1.GetCostEstimationRequest{Id: est.GetId()})
	require.NoError(t, err)
	require.Equal(t, est.GetTaskId(), got.GetEstimation().GetTaskId())

	sources, err := e.in.GetRepoSources(context.Background(), &estimationv1.GetRepoSourcesRequest{OrgId: e.org, Id: est.GetId()})
	require.NoError(t, err)
	require.Len(t, sources.GetSources(), 2)
	require.Equal(t, "https://github.com/acme/app", sources.GetSources()[0].GetCloneUrl())
	require.Empty(t, sources.GetSources()[0].GetPassword())
	require.Equal(t, connectedURL+".git", sources.GetSources()[1].GetCloneUrl())
	require.Equal(t, "x-access-token", sources.GetSources()[1].GetUsername())
	require.Equal(t, "tok", sources.GetSources()[1].GetPassword())

	scan := uuid.NewString()
	_, err = e.in.ClaimEstimation(context.Background(), &estimationv1.ClaimEstimationRequest{OrgId: e.org, Id: est.GetId(), ScanId: scan})
	requireStatus(t, err, codes.InvalidArgument, "Cost estimation is not ready")

	ctx := context.Background()
	require.NoError(t, e.st.SaveRepoResult(ctx, est.GetId(), store.Repo{Position: 0, Status: vocab.EstimationCompleted, Branch: "main",
		CommitSHA: strings.Repeat("a", 40), Credits: 4, Applications: []detect.App{{Name: "app", Root: ".", Architecture: "Go library"}}}))
	require.NoError(t, e.st.SaveRepoResult(ctx, est.GetId(), store.Repo{Position: 1, Status: vocab.EstimationFailed, Error: "Branch not found"}))
	require.NoError(t, e.st.Finish(ctx, est.GetId()))

	done, err := e.in.GetEstimation(ctx, &estimationv1.GetEstimationRequest{OrgId: e.org, Id: est.GetId()})
	require.NoError(t, err)
	require.Equal(t, "partial", done.GetEstimation().GetStatus())
	require.Equal(t, int32(4), done.GetEstimation().GetTotalCredits())
	results := done.GetEstimation().GetRepoResults()
	require.Len(t, results, 2)
	require.Equal(t, service.ScanTypeFull, results[0].GetScanType())
	require.Equal(t, "Go library", results[0].GetApplications()[0].GetArchitecture())
	require.Equal(t, service.ScanTypePR, results[1].GetScanType())
	require.Equal(t, "Branch not found", results[1].GetError())

	claim, err := e.in.ClaimEstimation(ctx, &estimationv1.ClaimEstimationRequest{OrgId: e.org, Id: est.GetId(), ScanId: scan})
	require.NoError(t, err)
	require.True(t, claim.GetNewlyClaimed())
	again, err := e.in.ClaimEstimation(ctx, &estimationv1.ClaimEstimationRequest{OrgId: e.org, Id: est.GetId(), ScanId: scan})
	require.NoError(t, err)
	require.False(t, again.GetNewlyClaimed(), "claiming twice by the same scan is idempotent")
	_, err = e.in.ClaimEstimation(ctx, &estimationv1.ClaimEstimationRequest{OrgId: e.org, Id: est.GetId(), ScanId: uuid.NewString()})
	requireStatus(t, err, codes.InvalidArgument, "Cost estimation has already been claimed by a scan")

	rel, err := e.in.ReleaseEstimation(ctx, &estimationv1.ReleaseEstimationRequest{OrgId: e.org, Id: est.GetId(), ScanId: uuid.NewString()})
	require.NoError(t, err)
	require.False(t, rel.GetReleased(), "only the holder releases")
	rel, err = e.in.ReleaseEstimation(ctx, &estimationv1.ReleaseEstimationRequest{OrgId: e.org, Id: est.GetId(), ScanId: scan})
	require.NoError(t, err)
	require.True(t, rel.GetReleased())
	got, err = e.pub.GetCostEstimation(e.ctx, &estimationv1.GetCostEstimationRequest{Id: est.GetId()})
	require.NoError(t, err)
	require.Equal(t, "partial", got.GetEstimation().GetStatus())
}

func TestEstimationReadErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	created, err := e.pub.CreateCostEstimation(e.ctx, &estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{public("https://github.com/acme/app")}})
	require.NoError(t, err)
	id := created.GetEstimation().GetId()
	other := uuid.NewString()
	ctx := context.Background()
	for name, tc := range map[string]struct {
		call func() error
		code codes.Code
		msg  string
	}{
		"get bad id": {func() error {
			_, err := e.pub.GetCostEstimation(e.ctx, &estimationv1.GetCostEstimationRequest{Id: "e"})
			return err
		}, codes.InvalidArgument, "id must be a valid UUID"},
		"get foreign": {func() error {
			ctx := principal.With(ctx, principal.Principal{OrgID: other, UserID: uuid.NewString()})
			_, err := e.pub.GetCostEstimation(ctx, &estimationv1.GetCostEstimationRequest{Id: id})
			return err
		}, codes.NotFound, "Cost estimation not found"},
		"get anonymous": {func() error {
			_, err := e.pub.GetCostEstimation(ctx, &estimationv1.GetCostEstimationRequest{Id: id})
			return err
		}, codes.Unauthenticated, "Missing API key"},
		"internal org id": {func() error {
			_, err := e.in.GetEstimation(ctx, &estimationv1.GetEstimationRequest{OrgId: "o", Id: id})
			return err
		}, codes.InvalidArgument, "org_id must be a valid UUID"},
		"internal foreign": {func() error {
			_, err := e.in.GetEstimation(ctx, &estimationv1.GetEstimationRequest{OrgId: other, Id: id})
			return err
		}, codes.NotFound, "Cost estimation not found"},
		"claim scan id": {func() error {
			_, err := e.in.ClaimEstimation(ctx, &estimationv1.ClaimEstimationRequest{OrgId: e.org, Id: id, ScanId: ""})
			return err
		}, codes.InvalidArgument, "scan_id is required"},
		"claim foreign": {func() error {
			_, err := e.in.ClaimEstimation(ctx, &estimationv1.ClaimEstimationRequest{OrgId: other, Id: id, ScanId: uuid.NewString()})
			return err
		}, codes.NotFound, "Cost estimation not found"},
		"release foreign": {func() error {
			_, err := e.in.ReleaseEstimation(ctx, &estimationv1.ReleaseEstimationRequest{OrgId: other, Id: id, ScanId: uuid.NewString()})
			return err
		}, codes.NotFound, "Cost estimation not found"},
		"sources foreign": {func() error {
			_, err := e.in.GetRepoSources(ctx, &estimationv1.GetRepoSourcesRequest{OrgId: other, Id: id})
			return err
		}, codes.NotFound, "Cost estimation not found"},
		"list limit": {func() error {
			limit := int32(0)
			_, err := e.pub.ListCostEstimations(e.ctx, &estimationv1.ListCostEstimationsRequest{Limit: &limit})
			return err
		}, codes.InvalidArgument, "limit must be between 1 and 100"},
		"list offset": {func() error {
			offset := int32(-1)
			_, err := e.pub.ListCostEstimations(e.ctx, &estimationv1.ListCostEstimationsRequest{Offset: &offset})
			return err
		}, codes.InvalidArgument, "offset must be at least 0"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			requireStatus(t, tc.call(), tc.code, tc.msg)
		})
	}
}

func TestListCostEstimationsPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var ids []string
	for range 3 {
		c, err := e.pub.CreateCostEstimation(e.ctx, &estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{public("https://github.com/acme/app")}})
		require.NoError(t, err)
		ids = append(ids, c.GetEstimation().GetId())
	}
	foreign := principal.With(context.Background(), principal.Principal{OrgID: uuid.NewString(), UserID: uuid.NewString()})
	_, err := e.pub.CreateCostEstimation(foreign, &estimationv1.CreateCostEstimationRequest{Repos: []*estimationv1.RepoRef{public("https://github.com/acme/app")}})
	require.NoError(t, err)

	all, err := e.pub.ListCostEstimations(e.ctx, &estimationv1.ListCostEstimationsRequest{})
	require.NoError(t, err)
	require.Equal(t, int32(3), all.GetTotal())
	require.Len(t, all.GetData(), 3)
	seen := map[string]bool{}
	for offset := int32(0); offset < 4; offset += 2 {
		limit := int32(2)
		page, err := e.pub.ListCostEstimations(e.ctx, &estimationv1.ListCostEstimationsRequest{Limit: &limit, Offset: &offset})
		require.NoError(t, err)
		require.Equal(t, int32(3), page.GetTotal())
		for _, est := range page.GetData() {
			require.False(t, seen[est.GetId()])
			seen[est.GetId()] = true
		}
	}
	require.Len(t, seen, 3)
	for _, id := range ids {
		require.True(t, seen[id], id)
	}
}
