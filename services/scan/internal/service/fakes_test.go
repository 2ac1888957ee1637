package service_test

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle/lifecycletest"
)

// estimations stands in for the estimation service: the claims, and the
// estimations it can read by id, each visible to its organization only.
type estimations struct {
	*lifecycletest.Claims
	mu   sync.Mutex
	byID map[string]*estimationv1.CostEstimation
}

func newEstimations() *estimations {
	return &estimations{Claims: lifecycletest.NewClaims(), byID: map[string]*estimationv1.CostEstimation{}}
}

func (e *estimations) add(est *estimationv1.CostEstimation) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byID[est.GetId()] = est
}

func (e *estimations) GetEstimation(_ context.Context, in *estimationv1.GetEstimationRequest, _ ...grpc.CallOption) (*estimationv1.GetEstimationResponse, error) {
	e.mu.Lock()
	est, ok := e.byID[in.GetId()]
	e.mu.Unlock()
	if !ok || est.GetOrganizationId() != in.GetOrgId() {
		return nil, status.Error(codes.NotFound, "estimation not found")
	}
	return &estimationv1.GetEstimationResponse{Estimation: est, ClaimedByScanId: e.Claimant(in.GetId())}, nil
}

// findings stands in for the findings service: the scans registered with
// it, and fixed severity counts for every scan it is asked about.
type findings struct {
	lifecycletest.Registry
}

func (f *findings) GetScanSummaries(_ context.Context, in *findingsv1.GetScanSummariesRequest, _ ...grpc.CallOption) (*findingsv1.GetScanSummariesResponse, error) {
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
