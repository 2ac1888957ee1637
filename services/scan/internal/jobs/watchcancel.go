package jobs

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// DefaultCancelPoll is how often a running scan looks for its cancellation.
const DefaultCancelPoll = 2 * time.Second

var (
	// errCancelled is the cause of a run context cancelled because the scan
	// was cancelled through the API.
	errCancelled = errors.New("scan cancelled")
)

// watchCancel returns a context for one run of a scan that is cancelled,
// with cause errCancelled, once the scan's status becomes cancelled. The
// status lives in the scan service's database, so the cancellation reaches
// the worker that holds the scan whichever process or machine it runs on;
// polling one row by primary key every few seconds per running scan costs
// little and needs no extra channel between API and workers. Cancelling the
// context stops the checkout, the engine (which checks it between files and
// stages and passes it to every live request) and the reporting of findings.
// Read errors are ignored: the next poll tries again, and the job's own
// timeout still bounds the run.
func (w *RunScanWorker) watchCancel(ctx context.Context, log *slog.Logger, id string) (context.Context, func()) {
	every := w.CancelPoll
	if every <= 0 {
		every = DefaultCancelPoll
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-runCtx.Done():
				return
			case <-t.C:
				status, err := w.Store.Status(runCtx, id)
				if err != nil {
					if runCtx.Err() == nil {
						log.WarnContext(ctx, "read scan status for cancellation", "error", err.Error())
					}
					continue
				}
				if status == vocab.ScanCancelled {
					log.InfoContext(ctx, "scan cancelled; stopping it")
					cancel(errCancelled)
					return
				}
			}
		}
	}()
	return runCtx, func() { close(done); cancel(nil) }
}
