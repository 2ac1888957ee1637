// Package lifecycle holds what the scan API and the scan workers share about
// a scan's life: the reference its credits are debited and refunded under,
// its type, how it is described to the findings service, the jobs the start
// saga queues, and the two compensations that give back what a scan took —
// undoing a start that did not finish, and failing a started scan with a
// refund. Both sides call the same code, so they cannot disagree on the
// credit reference or on the order of the steps.
package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// Defaults of the start saga's timing.
const (
	// DefaultStartBudget bounds a whole start, every call to another
	// service included.
	DefaultStartBudget = 30 * time.Second
	// DefaultRecoveryDelay is how long a start may take before recovery
	// looks at it. It must stay well above the start budget, so recovery
	// never runs while a request could still claim or debit.
	DefaultRecoveryDelay = 2 * time.Minute
)

// CreditReference is the idempotency reference of a scan's debit and of
// every refund of it.
func CreditReference(scanID string) string { return "scan:" + scanID }

// Scan types: a scan is "pr" when its primary repository's estimation
// entry names a base, "full" otherwise.
const (
	ScanTypeFull = "full"
	ScanTypePR   = "pr"
)

// ScanType is the type of a scan of repos (primary first).
func ScanType(repos []store.Repo) string {
	if len(repos) > 0 && repos[0].BaseBranch != "" {
		return ScanTypePR
	}
	return ScanTypeFull
}

// RegisterRequest describes a scan to the findings service.
func RegisterRequest(sc store.Scan) *findingsv1.RegisterScanRequest {
	primary, key, commit, pr := "", "", "", int32(0)
	if len(sc.Repos) > 0 {
		primary = sc.Repos[0].URL
		if sc.Repos[0].Identity != "" {
			key = sc.Repos[0].Identity
		}
		if sc.ScanType == ScanTypePR {
			// The git hosting integration comments on the pull request (or
			// its head commit) of a PR scan.
			commit, pr = sc.Repos[0].CommitSHA, sc.Repos[0].PullRequest
		}
	}
	return &findingsv1.RegisterScanRequest{ScanId: sc.ID, OrgId: sc.OrgID, RepoUrl: primary, ScanType: sc.ScanType, RepoKey: key,
		CommitSha: commit, PullRequest: pr}
}

// Queue inserts a scan's jobs in the caller's transaction, so a job exists
// exactly when the change that needs it is committed. Package jobs
// implements it on the service's River queue.
type Queue interface {
	// RecoverStart schedules the recovery of a start after delay.
	RecoverStart(ctx context.Context, tx pgx.Tx, scanID string, delay time.Duration) error
	// RunScan queues a started scan for a worker.
	RunScan(ctx context.Context, tx pgx.Tx, scanID string) error
	// UndoCancelledStart queues giving back what a cancelled pending scan took.
	UndoCancelledStart(ctx context.Context, tx pgx.Tx, scanID string) error
}

// FailedMessage is the error of a scan that could not be completed.
const FailedMessage = "The scan could not be completed"

// Compensations gives back what a scan took from the other services: its
// credits (auth) and its estimation's claim (estimation). Every step is
// idempotent by the scan (the refund by CreditReference), so a step may run
// any number of times, from the request, a worker or a retried job.
type Compensations struct {
	Store      *store.Store
	Auth       authv1.AuthInternalServiceClient
	Estimation estimationv1.EstimationInternalServiceClient
}

// AbortStart undoes a start that did not finish: it moves the scan to
// 'aborting' (so the request can no longer complete it), gives back the
// credits and the claim, then marks it aborted. It does nothing for a scan
// that started or was already aborted.
func (c *Compensations) AbortStart(ctx context.Context, scanID string) error {
	sc, ok, err := c.Store.BeginAbort(ctx, scanID)
	if err != nil || !ok {
		return err
	}
	if err := c.GiveBack(ctx, sc); err != nil {
		return err
	}
	return c.Store.FinishAbort(ctx, sc.ID)
}

// GiveBack refunds a scan's credits and releases its estimation, for a scan
// that never ran: an aborted start or a scan cancelled while pending.
func (c *Compensations) GiveBack(ctx context.Context, sc store.Scan) error {
	if err := c.refund(ctx, sc); err != nil {
		return err
	}
	if _, err := c.Estimation.ReleaseEstimation(ctx, &estimationv1.ReleaseEstimationRequest{OrgId: sc.OrgID, Id: sc.EstimationID, ScanId: sc.ID}); err != nil {
		return fmt.Errorf("release estimation: %w", err)
	}
	return nil
}

// FailAndRefund refunds a started scan's credits and only then marks it
// failed with msg: if the refund cannot be made now, the scan stays
// unfinished, so a retry or the sweeper (which looks at unfinished scans)
// does both later. The estimation stays claimed: the scan used it.
func (c *Compensations) FailAndRefund(ctx context.Context, sc store.Scan, msg string) error {
	if err := c.refund(ctx, sc); err != nil {
		return err
	}
	if _, err := c.Store.Fail(ctx, sc.ID, msg); err != nil {
		return err
	}
	return nil
}

func (c *Compensations) refund(ctx context.Context, sc store.Scan) error {
	if _, err := c.Auth.RefundCredits(ctx, &authv1.RefundCreditsRequest{OrgId: sc.OrgID, Reference: CreditReference(sc.ID)}); err != nil {
		return fmt.Errorf("refund scan %s: %w", sc.ID, err)
	}
	return nil
}
