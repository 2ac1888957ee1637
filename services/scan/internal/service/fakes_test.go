package service_test

import (
	"context"
	"errors"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// estimations stands in for the estimation service: the estimations it
// knows by id, and which scan claimed each. The embedded interface is nil:
// any other call panics.
type estimations struct {
	estimationv1.EstimationInternalServiceClient
	mu        sync.Mutex
	byID      map[string]*estimationv1.CostEstimation
	claimedBy map[string]string
}

func newEstimations() *estimations {
	return &estimations{byID: map[string]*estimationv1.CostEstimation{}, claimedBy: map[string]string{}}
}

func (e *estimations) add(est *estimationv1.CostEstimation) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byID[est.GetId()] = est
}

func (e *estimations) claimant(id string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.claimedBy[id]
}

func (e *estimations) GetEstimation(_ context.Context, in *estimationv1.GetEstimationRequest, _ ...grpc.CallOption) (*estimationv1.GetEstimationResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	est, ok := e.byID[in.GetId()]
	if !ok || est.GetOrganizationId() != in.GetOrgId() {
		return nil, status.Error(codes.NotFound, "estimation not found")
	}
	return &estimationv1.GetEstimationResponse{Estimation: est, ClaimedByScanId: e.claimedBy[in.GetId()]}, nil
}

func (e *estimations) ClaimEstimation(_ context.Context, in *estimationv1.ClaimEstimationRequest, _ ...grpc.CallOption) (*estimationv1.ClaimEstimationResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if by := e.claimedBy[in.GetId()]; by != "" && by != in.GetScanId() {
		return nil, status.Error(codes.AlreadyExists, "Cost estimation has already been claimed by a scan")
	}
	fresh := e.claimedBy[in.GetId()] == ""
	e.claimedBy[in.GetId()] = in.GetScanId()
	return &estimationv1.ClaimEstimationResponse{NewlyClaimed: fresh}, nil
}

func (e *estimations) ReleaseEstimation(_ context.Context, in *estimationv1.ReleaseEstimationRequest, _ ...grpc.CallOption) (*estimationv1.ReleaseEstimationResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.claimedBy[in.GetId()] != in.GetScanId() {
		return &estimationv1.ReleaseEstimationResponse{}, nil
	}
	delete(e.claimedBy, in.GetId())
	return &estimationv1.ReleaseEstimationResponse{Released: true}, nil
}

// credits stands in for the auth service's ledger of one organization:
// debits and refunds idempotent by reference.
type credits struct {
	authv1.AuthInternalServiceClient
	mu       sync.Mutex
	balance  int32
	debits   map[string]int32
	refunded map[string]bool
}

func newCredits(balance int32) *credits {
	return &credits{balance: balance, debits: map[string]int32{}, refunded: map[string]bool{}}
}

func (c *credits) Balance() int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.balance
}

func (c *credits) DebitCredits(_ context.Context, in *authv1.DebitCreditsRequest, _ ...grpc.CallOption) (*authv1.DebitCreditsResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.debits[in.GetReference()]; ok {
		return &authv1.DebitCreditsResponse{Balance: c.balance}, nil
	}
	if c.balance < in.GetAmount() {
		return nil, errors.New("insufficient credits")
	}
	c.balance -= in.GetAmount()
	c.debits[in.GetReference()] = in.GetAmount()
	return &authv1.DebitCreditsResponse{Balance: c.balance, Applied: true}, nil
}

func (c *credits) RefundCredits(_ context.Context, in *authv1.RefundCreditsRequest, _ ...grpc.CallOption) (*authv1.RefundCreditsResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	amount, ok := c.debits[in.GetReference()]
	if !ok || c.refunded[in.GetReference()] {
		return &authv1.RefundCreditsResponse{Balance: c.balance}, nil
	}
	c.refunded[in.GetReference()] = true
	c.balance += amount
	return &authv1.RefundCreditsResponse{Balance: c.balance, Refunded: amount}, nil
}

// findings stands in for the findings service: the scans registered with
// it, and fixed severity counts for every scan it is asked about.
type findings struct {
	findingsv1.FindingsIntakeServiceClient
	mu         sync.Mutex
	registered []string
	asked      [][]string
}

func (f *findings) RegisterScan(_ context.Context, in *findingsv1.RegisterScanRequest, _ ...grpc.CallOption) (*findingsv1.RegisterScanResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registered = append(f.registered, in.GetScanId())
	return &findingsv1.RegisterScanResponse{}, nil
}

func (f *findings) GetScanSummaries(_ context.Context, in *findingsv1.GetScanSummariesRequest, _ ...grpc.CallOption) (*findingsv1.GetScanSummariesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, in.GetScanIds())
	out := &findingsv1.GetScanSummariesResponse{}
	for _, id := range in.GetScanIds() {
		sum := &findingsv1.ScanSummary{ScanId: id, Critical: 1, High: 2, Medium: 3, Low: 4, Info: 5}
		if in.GetWithVerification() {
			sum.Verification = &findingsv1.VerificationCounts{Candidates: 6, Approved: 3, Held: 2, Rejected: 1}
		}
		out.Summaries = append(out.Summaries, sum)
	}
	return out, nil
}
