package service

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/validate"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// MaxBatch bounds the findings of one report.
const MaxBatch = 1000

func (s *Intake) RegisterScan(ctx context.Context, req *findingsv1.RegisterScanRequest) (*findingsv1.RegisterScanResponse, error) {
	if err := validate.UUID("scan_id", req.GetScanId()); err != nil {
		return nil, err
	}
	if err := validate.UUID("org_id", req.GetOrgId()); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.GetRepoUrl()) == "" {
		return nil, apierr.Invalid("repo_url is required")
	}
	if err := validate.MaxLen("repo_url", req.GetRepoUrl(), 2048); err != nil {
		return nil, err
	}
	if err := validate.OneOf("scan_type", req.GetScanType(), "full", "pr"); err != nil {
		return nil, err
	}
	if req.GetPullRequest() < 0 {
		return nil, apierr.Invalid("pull_request must not be negative")
	}
	if err := validate.MaxLen("repo_key", req.GetRepoKey(), 2048); err != nil {
		return nil, err
	}
	created, err := s.Store.RegisterScan(ctx, store.Scan{ID: req.GetScanId(), OrgID: req.GetOrgId(), RepoURL: req.GetRepoUrl(), Key: req.GetRepoKey(),
		ScanType: req.GetScanType(), CommitSHA: req.GetCommitSha(), PullRequest: req.GetPullRequest()})
	if err != nil {
		return nil, translate(err)
	}
	return &findingsv1.RegisterScanResponse{ScanId: req.GetScanId(), Created: created}, nil
}

// CompleteScan is called once a scan reported all its findings; for a PR
// scan it queues the review comments and summary (store.CompleteScan).
func (s *Intake) CompleteScan(ctx context.Context, req *findingsv1.CompleteScanRequest) (*findingsv1.CompleteScanResponse, error) {
	if err := validate.UUID("scan_id", req.GetScanId()); err != nil {
		return nil, err
	}
	if err := validate.UUID("org_id", req.GetOrgId()); err != nil {
		return nil, err
	}
	n, err := s.Store.CompleteScan(ctx, req.GetOrgId(), req.GetScanId())
	if err != nil {
		return nil, translate(err)
	}
	return &findingsv1.CompleteScanResponse{Queued: int32(n)}, nil
}

func reported(i int, f *findingsv1.ReportedFinding) (store.Reported, error) {
	field := func(name string) string { return "findings[" + strconv.Itoa(i) + "]." + name }
	r := store.Reported{Fingerprint: f.GetFingerprint(), Title: f.GetTitle(), Category: f.GetCategory(), Severity: f.GetSeverity(),
		Description: f.GetDescription(), AffectedFile: f.GetAffectedFile(), AffectedCode: f.GetAffectedCode(), Tags: f.GetTags(),
		StartLine: f.GetStartLine(), EndLine: f.GetEndLine(), Verified: f.GetVerified()}
	if f.ProofOfConcept != nil {
		v := f.GetProofOfConcept().GetValue()
		r.ProofOfConcept = &v
	}
	if f.MermaidTrace != nil {
		v := f.GetMermaidTrace().GetValue()
		r.MermaidTrace = &v
	}
	if strings.TrimSpace(r.Fingerprint) == "" {
		return r, apierr.Invalid("%s is required", field("fingerprint"))
	}
	if strings.TrimSpace(r.Title) == "" {
		return r, apierr.Invalid("%s is required", field("title"))
	}
	for _, c := range []struct {
		name, v string
		max     int
	}{{"fingerprint", r.Fingerprint, 256}, {"title", r.Title, 500}, {"affected_file", r.AffectedFile, 4096},
		{"description", r.Description, 100000}, {"affected_code", r.AffectedCode, 100000}} {
		// The field's full name is built only for an error: most reports
		// have none, and a batch has hundreds of fields.
		if validate.MaxLen(c.name, c.v, c.max) != nil {
			return r, validate.MaxLen(field(c.name), c.v, c.max)
		}
	}
	if validate.OneOf("category", r.Category, store.Categories...) != nil {
		return r, validate.OneOf(field("category"), r.Category, store.Categories...)
	}
	if validate.OneOf("severity", r.Severity, store.Severities...) != nil {
		return r, validate.OneOf(field("severity"), r.Severity, store.Severities...)
	}
	if r.StartLine < 0 || r.EndLine < 0 {
		return r, apierr.Invalid("%s must not be negative", field("start_line"))
	}
	return r, nil
}

func (s *Intake) ReportFindings(ctx context.Context, req *findingsv1.ReportFindingsRequest) (*findingsv1.ReportFindingsResponse, error) {
	if err := validate.UUID("scan_id", req.GetScanId()); err != nil {
		return nil, err
	}
	if len(req.GetFindings()) > MaxBatch {
		return nil, apierr.Invalid("findings: at most %d per report", MaxBatch)
	}
	batch := make([]store.Reported, 0, len(req.GetFindings()))
	anyVerified := false
	for i, f := range req.GetFindings() {
		r, err := reported(i, f)
		if err != nil {
			return nil, err
		}
		anyVerified = anyVerified || r.Verified
		batch = append(batch, r)
	}
	sc, err := s.Store.GetScan(ctx, req.GetScanId())
	if err != nil {
		return nil, translate(err)
	}
	auto := false
	if anyVerified {
		org, err := s.Auth.GetOrganization(ctx, &authv1.GetOrganizationRequest{OrgId: sc.OrgID})
		if err != nil {
			return nil, apierr.Internal.Wrap(err)
		}
		auto = org.GetVerificationMode() != "manual"
	}
	res, err := s.Store.Report(ctx, sc, batch, auto)
	if err != nil {
		return nil, translate(err)
	}
	out := &findingsv1.ReportFindingsResponse{Results: make([]*findingsv1.ReportedFindingResult, 0, len(res))}
	for _, r := range res {
		out.Results = append(out.Results, &findingsv1.ReportedFindingResult{Fingerprint: r.Fingerprint, FindingId: r.FindingID,
			VerificationStatus: r.VerificationStatus, Created: r.Created, Reopened: r.Reopened})
	}
	return out, nil
}

func (s *Intake) ApproveFinding(ctx context.Context, req *findingsv1.ApproveFindingRequest) (*findingsv1.ApproveFindingResponse, error) {
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	st, err := s.Store.SetVerification(ctx, req.GetId(), store.Approved)
	if err != nil {
		return nil, translate(err)
	}
	return &findingsv1.ApproveFindingResponse{Id: req.GetId(), VerificationStatus: st}, nil
}

func (s *Intake) RejectFinding(ctx context.Context, req *findingsv1.RejectFindingRequest) (*findingsv1.RejectFindingResponse, error) {
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	st, err := s.Store.SetVerification(ctx, req.GetId(), store.Rejected)
	if err != nil {
		return nil, translate(err)
	}
	return &findingsv1.RejectFindingResponse{Id: req.GetId(), VerificationStatus: st}, nil
}

func (s *Intake) ListFindingsForOperator(ctx context.Context, req *findingsv1.ListFindingsForOperatorRequest) (*findingsv1.ListFindingsForOperatorResponse, error) {
	q := store.OperatorQuery{ScanID: req.GetScanId(), OrgID: req.GetOrgId(), Status: req.GetVerificationStatus(), IncludeUnverified: req.GetIncludeUnverified()}
	switch {
	case q.ScanID == "" && q.OrgID == "":
		return nil, apierr.Invalid("scan_id or org_id is required")
	case q.ScanID != "" && q.OrgID != "":
		return nil, apierr.Invalid("give scan_id or org_id, not both")
	case q.ScanID != "":
		if err := validate.UUID("scan_id", q.ScanID); err != nil {
			return nil, err
		}
		if _, err := s.Store.GetScan(ctx, q.ScanID); err != nil {
			return nil, translate(err)
		}
	default:
		if err := validate.UUID("org_id", q.OrgID); err != nil {
			return nil, err
		}
	}
	if q.Status != "" {
		if err := validate.OneOf("verification_status", q.Status, store.Pending, store.Approved, store.Rejected); err != nil {
			return nil, err
		}
	}
	list, err := s.Store.ListForReview(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &findingsv1.ListFindingsForOperatorResponse{Data: make([]*findingsv1.OperatorFinding, 0, len(list))}
	for _, f := range list {
		out.Data = append(out.Data, &findingsv1.OperatorFinding{Id: f.ID, Title: f.Title, VerificationStatus: f.VerificationStatus,
			Severity: f.Severity, State: f.State, Category: f.Category, Fingerprint: f.Fingerprint, AffectedFile: f.AffectedFile,
			FoundAt: timestamppb.New(f.FoundAt), StartLine: f.StartLine, Confidence: f.Confidence, Reasons: f.Reasons})
	}
	return out, nil
}

func (s *Intake) GetScanSummaries(ctx context.Context, req *findingsv1.GetScanSummariesRequest) (*findingsv1.GetScanSummariesResponse, error) {
	if err := validate.UUID("org_id", req.GetOrgId()); err != nil {
		return nil, err
	}
	if len(req.GetScanIds()) > 100 {
		return nil, apierr.Invalid("scan_ids must have at most 100 entries")
	}
	for i, id := range req.GetScanIds() {
		if err := validate.UUID(fmt.Sprintf("scan_ids[%d]", i), id); err != nil {
			return nil, err
		}
	}
	out := &findingsv1.GetScanSummariesResponse{}
	if len(req.GetScanIds()) == 0 {
		return out, nil
	}
	all, err := s.Store.Summaries(ctx, req.GetOrgId(), req.GetScanIds())
	if err != nil {
		return nil, err
	}
	var ver map[string]map[string]int64
	if req.GetWithVerification() {
		if ver, err = s.Store.VerificationCounts(ctx, req.GetOrgId(), req.GetScanIds()); err != nil {
			return nil, err
		}
	}
	for _, id := range req.GetScanIds() {
		m := all[id]
		sum := &findingsv1.ScanSummary{ScanId: id, Critical: int32(m["critical"]), High: int32(m["high"]),
			Medium: int32(m["medium"]), Low: int32(m["low"]), Info: int32(m["info"])}
		if ver != nil {
			v := ver[id]
			sum.Verification = &findingsv1.VerificationCounts{Candidates: int32(v[store.Approved] + v[store.Pending] + v[store.Rejected]),
				Approved: int32(v[store.Approved]), Held: int32(v[store.Pending]), Rejected: int32(v[store.Rejected])}
		}
		out.Summaries = append(out.Summaries, sum)
	}
	return out, nil
}
