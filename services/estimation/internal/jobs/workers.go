package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
)

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
	idle := w.Idle
	if idle <= 0 {
		idle = SweepInterval
	}
	ids, err := w.Store.Stranded(ctx, idle)
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
