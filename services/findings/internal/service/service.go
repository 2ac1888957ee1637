// Package service implements the findings service's gRPC APIs: the public
// one served as REST (lists, single read, triage, comments, export), the
// intake used by the scan service and operators (scan registration,
// finding reports, verification), and the operators' integration admin.
package service

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// Service holds what the APIs share.
type Service struct {
	Store *store.Store
	Auth  authv1.AuthInternalServiceClient
	Box   *secretbox.Box
	Log   *slog.Logger

	usernames sync.Map // user id → username
}

// Public serves FindingsService.
type Public struct {
	findingsv1.UnimplementedFindingsServiceServer
	*Service
}

// Intake serves FindingsIntakeService.
type Intake struct {
	findingsv1.UnimplementedFindingsIntakeServiceServer
	*Service
}

// Admin serves FindingsAdminService.
type Admin struct {
	findingsv1.UnimplementedFindingsAdminServiceServer
	*Service
}

// Messages fixed by the spec.
const (
	msgFindingNotFound = "Finding not found"
	msgScanNotFound    = "Scan not found"
)

// translate maps store errors to API errors; anything else stays internal.
func translate(err error) error {
	var inv *store.InvalidError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return apierr.NotFound(msgFindingNotFound)
	case errors.Is(err, store.ErrScanNotFound):
		return apierr.NotFound(msgScanNotFound)
	case errors.As(err, &inv):
		return apierr.Invalid("%s", inv.Msg)
	}
	return err
}

// username returns a user's display name from the auth service.
func (s *Service) username(ctx context.Context, userID string) (string, error) {
	if v, ok := s.usernames.Load(userID); ok {
		return v.(string), nil
	}
	u, err := s.Auth.GetUser(ctx, &authv1.GetUserRequest{UserId: userID})
	if err != nil {
		return "", apierr.Internal.Wrap(err)
	}
	s.usernames.Store(userID, u.GetUsername())
	return u.GetUsername(), nil
}

func str(p *string) *wrapperspb.StringValue {
	if p == nil {
		return nil
	}
	return wrapperspb.String(*p)
}

func findingProto(f store.Finding) *findingsv1.Finding {
	var scan *wrapperspb.StringValue
	if f.ScanID != "" {
		scan = wrapperspb.String(f.ScanID)
	}
	return &findingsv1.Finding{
		Id: f.ID, Title: f.Title, Category: f.Category, Severity: f.Severity, State: f.State,
		Description: f.Description, AffectedFile: f.AffectedFile, AffectedCode: f.AffectedCode,
		ProofOfConcept: str(f.ProofOfConcept), Tags: f.Tags, ScanId: scan,
		FoundAt: timestamppb.New(f.FoundAt), UpdatedAt: timestamppb.New(f.UpdatedAt), DuplicateOf: str(f.DuplicateOf),
		Line: line(f.Line), Fingerprint: f.Fingerprint,
	}
}

// line is null for a finding without a source location (stored as 0).
func line(n int32) *wrapperspb.Int32Value {
	if n <= 0 {
		return nil
	}
	return wrapperspb.Int32(n)
}

func detailProto(d store.Detail) *findingsv1.GetFindingResponse {
	f := findingProto(d.Finding)
	out := &findingsv1.GetFindingResponse{
		Id: f.Id, Title: f.Title, Category: f.Category, Severity: f.Severity, State: f.State,
		Description: f.Description, AffectedFile: f.AffectedFile, AffectedCode: f.AffectedCode,
		ProofOfConcept: f.ProofOfConcept, Tags: f.Tags, ScanId: f.ScanId, FoundAt: f.FoundAt, UpdatedAt: f.UpdatedAt,
		DuplicateOf: f.DuplicateOf, MermaidTrace: str(d.MermaidTrace), OccurrenceCount: d.OccurrenceCount,
		RepoUrl: str(d.RepoURL), ScanType: str(d.ScanType), Line: f.Line, Fingerprint: f.Fingerprint, TriageThread: make([]*findingsv1.TriageEntry, 0, len(d.Thread)),
	}
	for _, e := range d.Thread {
		out.TriageThread = append(out.TriageThread, &findingsv1.TriageEntry{
			Id: e.ID, Reaction: str(e.Reaction), Comment: str(e.Comment), UserId: e.UserID, Username: e.Username,
			Source: e.Source, Timestamp: timestamppb.New(e.CreatedAt),
		})
	}
	if d.RiskExpiresAt != nil {
		out.RiskExpiresAt = timestamppb.New(*d.RiskExpiresAt)
	}
	return out
}

func statusOf(err error) *status.Status { return status.Convert(err) }
