// Package service implements the scan service's public gRPC API: starting a
// scan (the start saga across the estimation, auth and scan services),
// status, details, lists and context documents.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/validate"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// Limits of the API.
const (
	MaxTextField       = 2000
	MaxDocumentContent = 100_000
	MaxDocumentName    = 200
	MaxTargetURLs      = 20
	MaxContextDocs     = 20
	MaxScanRepos       = 20
)

// Service serves ScanService.
type Service struct {
	scanv1.UnimplementedScanServiceServer
	Store    *store.Store
	Starter  *Starter
	Findings findingsv1.FindingsIntakeServiceClient
	Log      *slog.Logger
	// Documents bounds each organization's context documents
	// (SCAN_MAX_CONTEXT_DOCUMENTS, SCAN_MAX_CONTEXT_DOCUMENT_CHARS).
	Documents store.DocumentQuota
}

// CreateScan validates the request and runs the start saga.
func (s *Service) CreateScan(ctx context.Context, req *scanv1.CreateScanRequest) (*scanv1.CreateScanResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	in, err := s.Starter.Validate(ctx, caller, req)
	if err != nil {
		return nil, err
	}
	sc, err := s.Starter.Start(ctx, in)
	if err != nil {
		return nil, err
	}
	return &scanv1.CreateScanResponse{Id: sc.ID, TaskId: sc.TaskID, Status: string(sc.Status), Message: "Scan queued; poll GET /v1/scans/" + sc.ID + "/status until it is completed"}, nil
}

func (s *Service) get(ctx context.Context, id string) (store.Scan, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return store.Scan{}, err
	}
	if err := validate.UUID("id", id); err != nil {
		return store.Scan{}, err
	}
	sc, err := s.Store.Get(ctx, caller.OrgID, id)
	if errors.Is(err, store.ErrNotFound) {
		return sc, apierr.NotFound("Scan not found")
	}
	return sc, err
}

func (s *Service) GetScanStatus(ctx context.Context, req *scanv1.GetScanStatusRequest) (*scanv1.GetScanStatusResponse, error) {
	sc, err := s.get(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	return &scanv1.GetScanStatusResponse{Id: sc.ID, Status: string(sc.Status), Progress: sc.Progress, UpdatedAt: timestamppb.New(sc.UpdatedAt)}, nil
}

func (s *Service) GetScan(ctx context.Context, req *scanv1.GetScanRequest) (*scanv1.GetScanResponse, error) {
	sc, err := s.get(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	out := []*scanv1.Scan{scanProto(sc)}
	if err := s.addSummaries(ctx, sc.OrgID, out, true); err != nil {
		return nil, err
	}
	return &scanv1.GetScanResponse{Scan: out[0]}, nil
}

func (s *Service) ListScans(ctx context.Context, req *scanv1.ListScansRequest) (*scanv1.ListScansResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	q := store.ListQuery{OrgID: caller.OrgID, Status: req.GetStatus(), SortBy: req.GetSortBy(), SortOrder: req.GetSortOrder()}
	if q.Page, q.Limit, err = vocab.Page(req.Page, req.Limit, vocab.DefaultPageLimit); err != nil {
		return nil, err
	}
	if q.Status != "" {
		if _, err := vocab.ScanStatuses.Parse("status", q.Status); err != nil {
			return nil, err
		}
	}
	if q.SortBy == "" {
		q.SortBy = "created_at"
	}
	if err := validate.OneOf("sort_by", q.SortBy, "created_at", "updated_at", "status"); err != nil {
		return nil, err
	}
	if q.SortOrder == "" {
		q.SortOrder = "DESC"
	}
	if err := validate.OneOf("sort_order", q.SortOrder, "ASC", "DESC"); err != nil {
		return nil, err
	}
	scans, total, err := s.Store.List(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &scanv1.ListScansResponse{Data: make([]*scanv1.Scan, 0, len(scans)), Total: total, Page: q.Page, Limit: q.Limit}
	for _, sc := range scans {
		out.Data = append(out.Data, scanProto(sc))
	}
	if err := s.addSummaries(ctx, caller.OrgID, out.Data, false); err != nil {
		return nil, err
	}
	return out, nil
}

// addSummaries fills findings_summary of the scans (and, for the scan
// details, verification) with one call to the findings service.
func (s *Service) addSummaries(ctx context.Context, orgID string, scans []*scanv1.Scan, verification bool) error {
	if len(scans) == 0 {
		return nil
	}
	ids := make([]string, len(scans))
	for i, sc := range scans {
		ids[i] = sc.GetId()
	}
	resp, err := s.Findings.GetScanSummaries(ctx, &findingsv1.GetScanSummariesRequest{OrgId: orgID, ScanIds: ids, WithVerification: verification})
	if err != nil {
		return fmt.Errorf("findings summaries: %w", err)
	}
	for i, sum := range resp.GetSummaries() {
		if i < len(scans) && sum.GetScanId() == ids[i] {
			scans[i].FindingsSummary = &scanv1.FindingsSummary{Critical: sum.GetCritical(), High: sum.GetHigh(), Medium: sum.GetMedium(), Low: sum.GetLow(), Info: sum.GetInfo()}
			if v := sum.GetVerification(); v != nil {
				scans[i].Verification = &scanv1.VerificationSummary{Candidates: v.GetCandidates(), Approved: v.GetApproved(), Held: v.GetHeld(), Rejected: v.GetRejected()}
			}
		}
	}
	return nil
}

func scanProto(sc store.Scan) *scanv1.Scan {
	p := &scanv1.Scan{
		Id: sc.ID, TaskId: sc.TaskID, Status: string(sc.Status), ScanType: sc.ScanType, CostEstimationId: sc.EstimationID,
		TargetUrls: nonNil(sc.TargetURLs), ContextDocumentIds: nonNil(sc.ContextDocumentIDs), CreditsUsed: sc.Credits,
		Progress: sc.Progress, CreatedAt: timestamppb.New(sc.CreatedAt), UpdatedAt: timestamppb.New(sc.UpdatedAt),
		FindingsSummary: &scanv1.FindingsSummary{},
	}
	if sc.Status == vocab.ScanFailed && sc.Error != nil {
		p.Error = wrapperspb.String(*sc.Error)
	}
	if sc.StartedAt != nil {
		p.StartedAt = timestamppb.New(*sc.StartedAt)
	}
	if sc.CompletedAt != nil {
		p.CompletedAt = timestamppb.New(*sc.CompletedAt)
	}
	for _, r := range sc.Repos {
		p.Repos = append(p.Repos, &scanv1.ScanRepo{Url: r.URL, Branch: r.Branch, Source: r.Source})
	}
	return p
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Service) CreateContextDocument(ctx context.Context, req *scanv1.CreateContextDocumentRequest) (*scanv1.CreateContextDocumentResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSpace(req.GetName())
	if name == "" {
		return nil, apierr.Invalid("name is required")
	}
	if err := validate.MaxLen("name", name, MaxDocumentName); err != nil {
		return nil, err
	}
	if req.GetContent() == "" {
		return nil, apierr.Invalid("content is required")
	}
	if err := validate.MaxLen("content", req.GetContent(), MaxDocumentContent); err != nil {
		return nil, err
	}
	if strings.ContainsRune(req.GetContent(), 0) {
		return nil, apierr.Invalid("content must be text")
	}
	d, err := s.Store.CreateDocument(ctx, store.Document{ID: uuid.NewString(), OrgID: caller.OrgID, Name: name, Content: req.GetContent(),
		Size: int32(utf8.RuneCountInString(req.GetContent()))}, s.Documents)
	if errors.Is(err, store.ErrQuota) {
		// A stored-resource quota is a conflict with what the organization
		// already has (like the active-key limit), not a rate: 409.
		return nil, apierr.Conflict("%s", strings.TrimPrefix(err.Error(), store.ErrQuota.Error()+": "))
	}
	if err != nil {
		return nil, err
	}
	return &scanv1.CreateContextDocumentResponse{Document: &scanv1.ContextDocumentInfo{Id: d.ID, Name: d.Name, Size: d.Size, CreatedAt: timestamppb.New(d.CreatedAt)}}, nil
}

func (s *Service) ListContextDocuments(ctx context.Context, _ *scanv1.ListContextDocumentsRequest) (*scanv1.ListContextDocumentsResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	docs, err := s.Store.ListDocuments(ctx, caller.OrgID)
	if err != nil {
		return nil, err
	}
	out := &scanv1.ListContextDocumentsResponse{Data: make([]*scanv1.ContextDocumentInfo, 0, len(docs)), Total: int32(len(docs))}
	for _, d := range docs {
		out.Data = append(out.Data, &scanv1.ContextDocumentInfo{Id: d.ID, Name: d.Name, Size: d.Size, CreatedAt: timestamppb.New(d.CreatedAt)})
	}
	return out, nil
}

func (s *Service) GetContextDocument(ctx context.Context, req *scanv1.GetContextDocumentRequest) (*scanv1.GetContextDocumentResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	d, err := s.Store.GetDocument(ctx, caller.OrgID, req.GetId())
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("Context document not found")
	}
	if err != nil {
		return nil, err
	}
	return &scanv1.GetContextDocumentResponse{Document: &scanv1.ContextDocument{Id: d.ID, Name: d.Name, Size: d.Size, CreatedAt: timestamppb.New(d.CreatedAt), Content: d.Content}}, nil
}
