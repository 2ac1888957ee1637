package lifecycle_test

import (
	"context"
	"errors"
	"sync"

	"google.golang.org/grpc"

	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// ledger stands in for the auth service's credit calls: one organization's
// balance, debits and refunds idempotent by reference as auth's are. The
// embedded interface is nil: any other call panics.
type ledger struct {
	authv1.AuthInternalServiceClient
	mu       sync.Mutex
	balance  int32
	debits   map[string]int32 // amount by reference
	refunded map[string]bool
	refunds  int   // refunds that gave credits back
	down     error // when set, every call fails with it
}

func newLedger(balance int32) *ledger {
	return &ledger{balance: balance, debits: map[string]int32{}, refunded: map[string]bool{}}
}

func (l *ledger) DebitCredits(_ context.Context, in *authv1.DebitCreditsRequest, _ ...grpc.CallOption) (*authv1.DebitCreditsResponse, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down != nil {
		return nil, l.down
	}
	if _, ok := l.debits[in.GetReference()]; ok {
		return &authv1.DebitCreditsResponse{Balance: l.balance}, nil
	}
	if l.balance < in.GetAmount() {
		return nil, errors.New("insufficient credits")
	}
	l.balance -= in.GetAmount()
	l.debits[in.GetReference()] = in.GetAmount()
	return &authv1.DebitCreditsResponse{Balance: l.balance, Applied: true}, nil
}

func (l *ledger) RefundCredits(_ context.Context, in *authv1.RefundCreditsRequest, _ ...grpc.CallOption) (*authv1.RefundCreditsResponse, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down != nil {
		return nil, l.down
	}
	amount, ok := l.debits[in.GetReference()]
	if !ok || l.refunded[in.GetReference()] {
		return &authv1.RefundCreditsResponse{Balance: l.balance}, nil
	}
	l.refunded[in.GetReference()] = true
	l.balance += amount
	l.refunds++
	return &authv1.RefundCreditsResponse{Balance: l.balance, Refunded: amount}, nil
}

func (l *ledger) state() (balance int32, refunds int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.balance, l.refunds
}

// claims stands in for the estimation service's claim calls: an
// estimation is claimed by at most one scan, and released by that scan only.
type claims struct {
	estimationv1.EstimationInternalServiceClient
	mu        sync.Mutex
	claimedBy map[string]string // scan id by estimation id
	down      error
}

func newClaims() *claims { return &claims{claimedBy: map[string]string{}} }

func (c *claims) ClaimEstimation(_ context.Context, in *estimationv1.ClaimEstimationRequest, _ ...grpc.CallOption) (*estimationv1.ClaimEstimationResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down != nil {
		return nil, c.down
	}
	if by := c.claimedBy[in.GetId()]; by != "" && by != in.GetScanId() {
		return nil, errors.New("claimed by another scan")
	}
	fresh := c.claimedBy[in.GetId()] == ""
	c.claimedBy[in.GetId()] = in.GetScanId()
	return &estimationv1.ClaimEstimationResponse{NewlyClaimed: fresh}, nil
}

func (c *claims) ReleaseEstimation(_ context.Context, in *estimationv1.ReleaseEstimationRequest, _ ...grpc.CallOption) (*estimationv1.ReleaseEstimationResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down != nil {
		return nil, c.down
	}
	if c.claimedBy[in.GetId()] != in.GetScanId() {
		return &estimationv1.ReleaseEstimationResponse{}, nil
	}
	delete(c.claimedBy, in.GetId())
	return &estimationv1.ReleaseEstimationResponse{Released: true}, nil
}

func (c *claims) claimant(estimationID string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.claimedBy[estimationID]
}

// registry stands in for the findings service's scan registration.
type registry struct {
	findingsv1.FindingsIntakeServiceClient
	mu      sync.Mutex
	scanIDs []string
}

func (r *registry) RegisterScan(_ context.Context, in *findingsv1.RegisterScanRequest, _ ...grpc.CallOption) (*findingsv1.RegisterScanResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scanIDs = append(r.scanIDs, in.GetScanId())
	return &findingsv1.RegisterScanResponse{}, nil
}
