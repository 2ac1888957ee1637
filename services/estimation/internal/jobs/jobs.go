// Package jobs owns the estimation service's background work on its River
// queue: every job's arguments, a type named by what the job does, and the
// worker that runs it, named the same with Worker appended:
//
//   - Estimate / EstimateWorker: estimate one estimation's repositories
//     (the work itself is the service's Run, which the API shares);
//   - SweepStranded / SweepStrandedWorker: end estimations whose job is gone;
//   - PurgeExpiredUploads / PurgeExpiredUploadsWorker: delete uploads past
//     their retention;
//   - PublishEstimationEvent / PublishEstimationEventWorker: publish an
//     estimation's end to the organization's webhooks.
//
// Queue inserts them in the caller's transaction for the API (Estimate) and
// for the store (Ended).
package jobs

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// Intervals of the periodic jobs.
const (
	SweepInterval = time.Minute
	PurgeInterval = time.Hour
)

// Estimate runs one estimation.
type Estimate struct {
	EstimationID string `json:"estimation_id"`
}

// Kind names the job in River's tables.
func (Estimate) Kind() string { return "estimate" }

// MaxAttempts bounds the retries of an estimation job.
const MaxAttempts = 5

// InsertOpts retries a failed job a few times.
func (Estimate) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: MaxAttempts}
}

// SweepStranded is the periodic job that ends stranded estimations.
type SweepStranded struct{}

// Kind names the job in River's tables.
func (SweepStranded) Kind() string { return "sweep_stranded_estimations" }

// InsertOpts keeps one sweep per period.
func (SweepStranded) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: SweepInterval}}
}

// PurgeExpiredUploads is the periodic job that deletes unused uploads.
type PurgeExpiredUploads struct{}

// Kind names the job in River's tables.
func (PurgeExpiredUploads) Kind() string { return "purge_expired_uploads" }

// InsertOpts keeps one purge per period.
func (PurgeExpiredUploads) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: PurgeInterval}}
}

// PublishEstimationEvent publishes one estimation's end: estimation.completed
// for a completed or partial estimation, estimation.failed for a failed one.
type PublishEstimationEvent struct {
	EstimationID string `json:"estimation_id"`
	OrgID        string `json:"org_id"`
	Type         string `json:"type"`
}

// Kind names the job in River's tables.
func (PublishEstimationEvent) Kind() string { return "publish_estimation_event" }

// InsertOpts retries while the findings service is unreachable, once per
// event.
func (PublishEstimationEvent) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// EventType is the event type of a terminal estimation status.
func EventType(status vocab.EstimationStatus) string {
	if status == vocab.EstimationCompleted || status == vocab.EstimationPartial {
		return "estimation.completed"
	}
	return "estimation.failed"
}

// Queue inserts the estimation jobs in the caller's transaction. River is
// set once the client exists (the client needs the workers first).
type Queue struct {
	River *river.Client[pgx.Tx]
}

// Estimate queues an estimation and returns its task id.
func (q *Queue) Estimate(ctx context.Context, tx pgx.Tx, estimationID string) (string, error) {
	res, err := q.River.InsertTx(ctx, tx, Estimate{EstimationID: estimationID}, nil)
	if err != nil {
		return "", err
	}
	return "estimate-" + strconv.FormatInt(res.Job.ID, 10), nil
}

// Ended is the store's Ended hook: it queues the estimation's webhook event
// in the transaction that ends it.
func (q *Queue) Ended(ctx context.Context, tx pgx.Tx, id, orgID string, status vocab.EstimationStatus) error {
	_, err := q.River.InsertTx(ctx, tx, PublishEstimationEvent{EstimationID: id, OrgID: orgID, Type: EventType(status)}, nil)
	return err
}
