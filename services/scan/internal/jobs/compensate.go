package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// RecoverStartWorker runs RecoverStart jobs: it undoes a start that is
// still unfinished when the job runs (lifecycle.Compensations.AbortStart).
type RecoverStartWorker struct {
	river.WorkerDefaults[RecoverStart]
	Compensations *lifecycle.Compensations
}

func (w *RecoverStartWorker) Work(ctx context.Context, job *river.Job[RecoverStart]) error {
	return w.Compensations.AbortStart(ctx, job.Args.ScanID)
}

// UndoCancelledStartWorker runs UndoCancelledStart jobs.
type UndoCancelledStartWorker struct {
	river.WorkerDefaults[UndoCancelledStart]
	Compensations *lifecycle.Compensations
}

func (w *UndoCancelledStartWorker) Work(ctx context.Context, job *river.Job[UndoCancelledStart]) error {
	sc, err := w.Compensations.Store.ByID(ctx, job.Args.ScanID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(fmt.Errorf("scan %s does not exist", job.Args.ScanID))
	}
	if err != nil {
		return err
	}
	if sc.Status != vocab.ScanCancelled {
		return river.JobCancel(fmt.Errorf("scan %s is %s, not cancelled", sc.ID, sc.Status))
	}
	return w.Compensations.GiveBack(ctx, sc)
}

// SweepStrandedWorker runs SweepStranded jobs: it fails and refunds the
// started scans, idle for longer than Idle, that no job will run any more.
type SweepStrandedWorker struct {
	river.WorkerDefaults[SweepStranded]
	Compensations *lifecycle.Compensations
	Log           *slog.Logger
	// Idle is how long a scan must have been idle to be swept
	// (DefaultSweepInterval when zero).
	Idle time.Duration
}

func (w *SweepStrandedWorker) Work(ctx context.Context, _ *river.Job[SweepStranded]) error {
	idle := w.Idle
	if idle <= 0 {
		idle = DefaultSweepInterval
	}
	stranded, err := w.Compensations.Store.Stranded(ctx, idle)
	if err != nil {
		return err
	}
	for _, sc := range stranded {
		w.Log.WarnContext(ctx, "failing a scan that no worker will run any more", "scan_id", sc.ID)
		if err := w.Compensations.FailAndRefund(ctx, sc, lifecycle.FailedMessage); err != nil {
			return err
		}
	}
	return nil
}
