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
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
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

// internalFailure is the error recorded on repositories an estimation could
// not finish.
const internalFailure = "internal error while estimating this repository"

// Estimator runs one estimation (the service's Run).
type Estimator interface {
	Run(ctx context.Context, estimationID string) error
}

// EstimateWorker runs Estimate jobs. An estimation whose last attempt
// fails is ended rather than left running: its pending repositories fail.
type EstimateWorker struct {
	river.WorkerDefaults[Estimate]
	Estimator Estimator
	Store     *store.Store
	Log       *slog.Logger
	// JobTimeout bounds one attempt.
	JobTimeout time.Duration
}

// Timeout is the time one attempt may take.
func (w *EstimateWorker) Timeout(*river.Job[Estimate]) time.Duration { return w.JobTimeout }

// Work runs the estimation.
func (w *EstimateWorker) Work(ctx context.Context, job *river.Job[Estimate]) error {
	id := job.Args.EstimationID
	err := w.Estimator.Run(ctx, id)
	var snooze *river.JobSnoozeError
	if errors.As(err, &snooze) {
		return err
	}
	if err != nil && job.Attempt >= job.MaxAttempts {
		// Last attempt: end the estimation rather than leave it running.
		w.Log.ErrorContext(ctx, "estimation job failed for good", "estimation_id", id, "error", err.Error())
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return failPending(fctx, w.Store, id)
	}
	return err
}

// failPending fails an estimation's pending repositories and gives it its
// terminal status.
func failPending(ctx context.Context, st *store.Store, id string) error {
	if err := st.FailPending(ctx, id, internalFailure); err != nil {
		return err
	}
	return st.Finish(ctx, id)
}

// SweepStrandedWorker ends estimations whose job is gone, failing their
// pending repositories, so that every accepted estimation reaches a
// terminal state.
type SweepStrandedWorker struct {
	river.WorkerDefaults[SweepStranded]
	Store *store.Store
	Log   *slog.Logger
	// Idle is how long an estimation must have been idle to be swept
	// (SweepInterval when zero).
	Idle time.Duration
}

// Work ends every stranded estimation.
func (w *SweepStrandedWorker) Work(ctx context.Context, _ *river.Job[SweepStranded]) error {
	ids, err := w.Store.Stranded(ctx, cmp.Or(w.Idle, SweepInterval))
	if err != nil {
		return err
	}
	for _, id := range ids {
		w.Log.WarnContext(ctx, "ending an estimation that no worker will run any more", "estimation_id", id)
		if err := failPending(ctx, w.Store, id); err != nil {
			return err
		}
	}
	return nil
}

// PurgeExpiredUploadsWorker deletes uploads past the retention period that
// no estimation has used within it (store.ExpiredUploads): the blob first,
// then the row, so a failure midway leaves a row the next run finds again,
// never a blob nothing points to.
type PurgeExpiredUploadsWorker struct {
	river.WorkerDefaults[PurgeExpiredUploads]
	Store     *store.Store
	Bucket    *blob.Bucket
	Log       *slog.Logger
	Retention time.Duration // ESTIMATION_UPLOAD_RETENTION
}

// purgeBatch is how many uploads one query returns.
const purgeBatch = 500

// Work deletes expired uploads in batches.
func (w *PurgeExpiredUploadsWorker) Work(ctx context.Context, _ *river.Job[PurgeExpiredUploads]) error {
	for {
		ups, err := w.Store.ExpiredUploads(ctx, w.Retention, purgeBatch)
		if err != nil {
			return err
		}
		for _, u := range ups {
			if err := w.Bucket.Delete(ctx, u.BlobKey); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
				return fmt.Errorf("delete upload blob %s: %w", u.ID, err)
			}
			if err := w.Store.DeleteUpload(ctx, u.ID); err != nil {
				return fmt.Errorf("delete upload %s: %w", u.ID, err)
			}
			w.Log.InfoContext(ctx, "deleted an upload past its retention", "upload_id", u.ID, "org_id", u.OrgID)
		}
		if len(ups) < purgeBatch {
			return nil
		}
	}
}
