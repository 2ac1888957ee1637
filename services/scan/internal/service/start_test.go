package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle/lifecycletest"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

const repoURL = "https://github.com/acme/app"

// estimation records a completed estimation of the caller's organization
// over repoURL@main worth 12 credits and returns its id.
func (e *env) estimation(change func(*estimationv1.CostEstimation)) string {
	est := &estimationv1.CostEstimation{
		Id: uuid.NewString(), OrganizationId: e.org, Status: "completed", TotalCredits: 12,
		Repos:       []*estimationv1.RepoRef{{Source: "connected", RepoUrl: repoURL, Branch: "main", CommitSha: "abc123"}},
		RepoResults: []*estimationv1.RepoResult{{RepoUrl: repoURL, Branch: "main", CommitSha: "abc123", Status: "completed", Credits: 12}},
	}
	if change != nil {
		change(est)
	}
	e.est.add(est)
	return est.GetId()
}

func repo(url, branch string) *scanv1.ScanRepo { return &scanv1.ScanRepo{Url: url, Branch: branch} }

// TestCreateScanFieldErrors: each invalid field answers 400 naming it,
// before any other service is called.
func TestCreateScanFieldErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	estID := e.estimation(nil)
	many := func(n int, s string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	manyRepos := make([]*scanv1.ScanRepo, 21)
	for i := range manyRepos {
		manyRepos[i] = repo(repoURL, "main")
	}
	for name, tc := range map[string]struct {
		req *scanv1.CreateScanRequest
		msg string
	}{
		"no repos":          {&scanv1.CreateScanRequest{CostEstimationId: estID}, "At least one repository is required"},
		"too many repos":    {&scanv1.CreateScanRequest{Repos: manyRepos}, "repos must have at most 20 entries"},
		"unknown source":    {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{{Url: repoURL, Branch: "main", Source: "ftp"}}}, "repos[0].source must be one of: connected, public, upload"},
		"missing url":       {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(" ", "main")}}, "repos[0].url is required"},
		"upload without id": {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{{Url: "upload://nope", Source: "upload"}}}, "repos[0].url must be upload://<upload id> for an upload"},
		"missing branch":    {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, "main"), repo(repoURL+"2", "")}}, "repos[1].branch is required"},
		"long branch":       {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, strings.Repeat("b", 256))}}, "repos[0].branch must be at most 255 characters"},
		"too many targets":  {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, "main")}, TargetUrls: many(21, "https://8.8.8.8")}, "target_urls must have at most 20 entries"},
		"long auth": {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, "main")}, AuthInstructions: strings.Repeat("a", 2001)},
			"auth_instructions must be at most 2000 characters"},
		"long context": {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, "main")}, CustomContext: strings.Repeat("a", 2001)},
			"custom_context must be at most 2000 characters"},
		"too many documents": {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, "main")}, ContextDocumentIds: many(21, uuid.NewString())},
			"context_document_ids must have at most 20 entries"},
		"document not a uuid": {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, "main")}, ContextDocumentIds: []string{"x"}},
			"context_document_ids[0] must be a valid UUID"},
		"no estimation": {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, "main")}}, "cost_estimation_id is required"},
		"pentest without estimation": {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, "main")}, TargetUrls: []string{"https://8.8.8.8"}},
			"cost_estimation_id is required for pentest scans"},
		"estimation not a uuid": {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, "main")}, CostEstimationId: "e1"},
			"cost_estimation_id must be a valid UUID"},
		"private target": {&scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, "main")}, TargetUrls: []string{"https://8.8.8.8", "http://10.0.0.1/admin"}, CostEstimationId: estID},
			"target_urls[1] must be a public URL: private and internal network addresses are not allowed"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := e.svc.CreateScan(e.ctx, tc.req)
			requireStatus(t, err, codes.InvalidArgument, tc.msg)
		})
	}
	require.Empty(t, e.est.Claimant(estID), "no failed request claimed the estimation")
	require.Equal(t, int32(100), balance(e.ledger), "no failed request debited credits")
}

// TestCreateScanEstimationRules: the estimation must be the caller's,
// usable, unclaimed and hold every requested repository at its branch.
func TestCreateScanEstimationRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	doc, err := e.svc.CreateContextDocument(e.ctx, &scanv1.CreateContextDocumentRequest{Name: "notes", Content: "the admin panel is at /admin"})
	require.NoError(t, err)
	foreign := uuid.NewString()
	e.est.add(&estimationv1.CostEstimation{Id: foreign, OrganizationId: uuid.NewString(), Status: "completed", TotalCredits: 3})
	claimed := e.estimation(nil)
	_, err = e.est.ClaimEstimation(context.Background(), &estimationv1.ClaimEstimationRequest{Id: claimed, ScanId: uuid.NewString()})
	require.NoError(t, err)
	missingDoc := uuid.NewString()

	for name, tc := range map[string]struct {
		estID string
		repos []*scanv1.ScanRepo
		docs  []string
		code  codes.Code
		msg   string
	}{
		"unknown":      {uuid.NewString(), nil, nil, codes.NotFound, "Cost estimation not found"},
		"foreign":      {foreign, nil, nil, codes.NotFound, "Cost estimation not found"},
		"failed":       {e.estimation(func(c *estimationv1.CostEstimation) { c.Status = "failed" }), nil, nil, codes.InvalidArgument, "Cost estimation failed and cannot be used for a scan"},
		"pending":      {e.estimation(func(c *estimationv1.CostEstimation) { c.Status = "pending" }), nil, nil, codes.InvalidArgument, "Cost estimation is not ready"},
		"no credits":   {e.estimation(func(c *estimationv1.CostEstimation) { c.TotalCredits = 0 }), nil, nil, codes.InvalidArgument, "Cost estimation has no credits to claim"},
		"other repo":   {e.estimation(nil), []*scanv1.ScanRepo{repo("https://github.com/acme/other", "main")}, nil, codes.InvalidArgument, "repos[0]: Repository or archive was not included in the estimation"},
		"other source": {e.estimation(nil), []*scanv1.ScanRepo{{Url: repoURL, Branch: "main", Source: "public"}}, nil, codes.InvalidArgument, "repos[0]: Repository or archive was not included in the estimation"},
		"repeated":     {e.estimation(nil), []*scanv1.ScanRepo{repo(repoURL, "main"), repo("HTTPS://GITHUB.COM/acme/app.git", "main")}, nil, codes.InvalidArgument, "repos[1] repeats repos[0]"},
		"branch":       {e.estimation(nil), []*scanv1.ScanRepo{repo(repoURL, "dev")}, nil, codes.InvalidArgument, "repos[0]: Branch does not match the estimation branch"},
		"repo failed": {e.estimation(func(c *estimationv1.CostEstimation) { c.Status = "partial"; c.RepoResults[0].Status = "failed" }), nil, nil,
			codes.InvalidArgument, "repos[0]: Repository failed in the estimation and cannot be scanned"},
		"missing document": {e.estimation(nil), nil, []string{doc.GetDocument().GetId(), missingDoc}, codes.InvalidArgument,
			"context_document_ids: context document " + missingDoc + " not found"},
		"claimed": {claimed, nil, nil, codes.InvalidArgument, "Cost estimation has already been claimed by a scan"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			repos := tc.repos
			if repos == nil {
				repos = []*scanv1.ScanRepo{repo(repoURL, "main")}
			}
			_, err := e.svc.CreateScan(e.ctx, &scanv1.CreateScanRequest{Repos: repos, CostEstimationId: tc.estID, ContextDocumentIds: tc.docs})
			requireStatus(t, err, tc.code, tc.msg)
		})
	}
	require.Equal(t, int32(100), balance(e.ledger), "no refused request debited credits")
}

// TestCreateScanRunsTheSaga: a valid request claims the estimation, debits
// its credits under the scan's reference, registers the scan with findings
// and answers a pending scan that reads back with the estimation's values.
func TestCreateScanRunsTheSaga(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	estID := e.estimation(nil)
	doc, err := e.svc.CreateContextDocument(e.ctx, &scanv1.CreateContextDocumentRequest{Name: "notes", Content: "login with the test account"})
	require.NoError(t, err)
	docID := doc.GetDocument().GetId()

	resp, err := e.svc.CreateScan(e.ctx, &scanv1.CreateScanRequest{
		Repos:            []*scanv1.ScanRepo{repo("https://GitHub.com/acme/app.git", "main")},
		CostEstimationId: estID, TargetUrls: []string{"https://8.8.8.8/app"}, AuthInstructions: "user: test",
		ContextDocumentIds: []string{docID},
	})
	require.NoError(t, err)
	require.Equal(t, "pending", resp.GetStatus())
	require.True(t, strings.HasPrefix(resp.GetTaskId(), "scan_"), resp.GetTaskId())
	require.Equal(t, "Scan queued; poll GET /v1/scans/"+resp.GetId()+"/status until it is completed", resp.GetMessage())

	require.Equal(t, resp.GetId(), e.est.Claimant(estID))
	require.Equal(t, int32(88), balance(e.ledger))
	require.Contains(t, e.ledger.Debits, lifecycle.CreditReference(resp.GetId()))
	require.Equal(t, []string{resp.GetId()}, e.fnd.ScanIDs())

	row, err := e.st.ByID(context.Background(), resp.GetId())
	require.NoError(t, err)
	require.Equal(t, store.Started, row.StartState)
	require.Equal(t, int32(12), row.Credits)
	require.Equal(t, estID, row.EstimationID)
	require.Equal(t, []string{docID}, row.ContextDocumentIDs)
	require.Len(t, row.Repos, 1)
	require.Equal(t, "abc123", row.Repos[0].CommitSHA, "the commit comes from the estimation")
	require.Equal(t, "connected", row.Repos[0].Source)
	require.NotEmpty(t, row.AuthInstructionsEnc)
	require.NotContains(t, string(row.AuthInstructionsEnc), "user: test", "auth instructions are stored sealed")

	// The same estimation cannot start a second scan.
	_, err = e.svc.CreateScan(e.ctx, &scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, "main")}, CostEstimationId: estID})
	requireStatus(t, err, codes.InvalidArgument, "Cost estimation has already been claimed by a scan")
	require.Equal(t, int32(88), balance(e.ledger))
}

// TestCreateScanUndoesAFailedDebit: when auth refuses the debit the claim
// is released and the scan is left aborted, not pending.
func TestCreateScanUndoesAFailedDebit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ledger = lifecycletest.NewLedger(5)
	e.svc.Starter.Auth = e.ledger
	estID := e.estimation(nil)
	_, err := e.svc.CreateScan(e.ctx, &scanv1.CreateScanRequest{Repos: []*scanv1.ScanRepo{repo(repoURL, "main")}, CostEstimationId: estID})
	require.ErrorContains(t, err, "debit credits: insufficient credits")
	require.Empty(t, e.est.Claimant(estID), "the claim is given back")
	require.Equal(t, int32(5), balance(e.ledger))
	list, err := e.svc.ListScans(e.ctx, &scanv1.ListScansRequest{})
	require.NoError(t, err)
	require.Zero(t, list.GetTotal(), "an aborted start is not listed")
}
