// Package lifecycletest stands in for the services a scan's lifecycle
// calls (auth's credit ledger, estimation's claims, findings' scan
// registration) in the scan service's unit tests, with the idempotency the
// real services have. Each embeds its gRPC client interface as nil: a call
// a stand-in does not implement panics.
package lifecycletest

import (
	"context"
	"errors"
	"sync"

	"google.golang.org/grpc"

	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// Ledger is one organization's credit balance: debits and refunds are
// idempotent by reference, as auth's are.
type Ledger struct {
	authv1.AuthInternalServiceClient
	mu       sync.Mutex
	balance  int32
	Debits   map[string]int32 // amount by reference
	Refunded map[string]bool
	refunds  int   // refunds that gave credits back
	Down     error // when set, every call fails with it
}

// NewLedger returns a ledger holding balance credits.
func NewLedger(balance int32) *Ledger {
	return &Ledger{balance: balance, Debits: map[string]int32{}, Refunded: map[string]bool{}}
}

func (l *Ledger) DebitCredits(_ context.Context, in *authv1.DebitCreditsRequest, _ ...grpc.CallOption) (*authv1.DebitCreditsResponse, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Down != nil {
		return nil, l.Down
	}
	if _, ok := l.Debits[in.GetReference()]; ok {
		return &authv1.DebitCreditsResponse{Balance: l.balance}, nil
	}
	if l.balance < in.GetAmount() {
		return nil, errors.New("insufficient credits")
	}
	l.balance -= in.GetAmount()
	l.Debits[in.GetReference()] = in.GetAmount()
	return &authv1.DebitCreditsResponse{Balance: l.balance, Applied: true}, nil
}

func (l *Ledger) RefundCredits(_ context.Context, in *authv1.RefundCreditsRequest, _ ...grpc.CallOption) (*authv1.RefundCreditsResponse, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Down != nil {
		return nil, l.Down
	}
	amount, ok := l.Debits[in.GetReference()]
	if !ok || l.Refunded[in.GetReference()] {
		return &authv1.RefundCreditsResponse{Balance: l.balance}, nil
	}
	l.Refunded[in.GetReference()] = true
	l.balance += amount
	l.refunds++
	return &authv1.RefundCreditsResponse{Balance: l.balance, Refunded: amount}, nil
}

// State returns the balance and how many refunds gave credits back.
func (l *Ledger) State() (balance int32, refunds int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.balance, l.refunds
}

// Claims holds estimation claims: an estimation is claimed by at most one
// scan, and released by that scan only.
type Claims struct {
	estimationv1.EstimationInternalServiceClient
	mu        sync.Mutex
	claimedBy map[string]string // scan id by estimation id
	Down      error
}

// NewClaims returns claims with nothing claimed.
func NewClaims() *Claims { return &Claims{claimedBy: map[string]string{}} }

func (c *Claims) ClaimEstimation(_ context.Context, in *estimationv1.ClaimEstimationRequest, _ ...grpc.CallOption) (*estimationv1.ClaimEstimationResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Down != nil {
		return nil, c.Down
	}
	if by := c.claimedBy[in.GetId()]; by != "" && by != in.GetScanId() {
		return nil, errors.New("claimed by another scan")
	}
	fresh := c.claimedBy[in.GetId()] == ""
	c.claimedBy[in.GetId()] = in.GetScanId()
	return &estimationv1.ClaimEstimationResponse{NewlyClaimed: fresh}, nil
}

func (c *Claims) ReleaseEstimation(_ context.Context, in *estimationv1.ReleaseEstimationRequest, _ ...grpc.CallOption) (*estimationv1.ReleaseEstimationResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Down != nil {
		return nil, c.Down
	}
	if c.claimedBy[in.GetId()] != in.GetScanId() {
		return &estimationv1.ReleaseEstimationResponse{}, nil
	}
	delete(c.claimedBy, in.GetId())
	return &estimationv1.ReleaseEstimationResponse{Released: true}, nil
}

// Claimant returns the scan holding the estimation, or "".
func (c *Claims) Claimant(estimationID string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.claimedBy[estimationID]
}

// Registry records the scans registered with the findings service.
type Registry struct {
	findingsv1.FindingsIntakeServiceClient
	mu      sync.Mutex
	scanIDs []string
}

func (r *Registry) RegisterScan(_ context.Context, in *findingsv1.RegisterScanRequest, _ ...grpc.CallOption) (*findingsv1.RegisterScanResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scanIDs = append(r.scanIDs, in.GetScanId())
	return &findingsv1.RegisterScanResponse{}, nil
}

// ScanIDs returns the registered scans in order.
func (r *Registry) ScanIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.scanIDs...)
}
