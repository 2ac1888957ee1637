// Package outbox is the one delivery loop of the findings service's two
// outboxes: integration events (findings.outbox, package delivery) and
// outbound webhook deliveries (findings.webhook_deliveries, package
// webhook). A Worker claims due rows with a lease, delivers them
// concurrently, and the deliverer records each outcome with the backoff or
// final status that Schedule computes. Loop is the periodic round that the
// workers, the counter fold and the risk-expiry reopening share.
//
// Why an outbox rather than River jobs, which the scan and estimation
// services use:
//   - The row is the product's record, not a queue entry. The webhook
//     delivery log (GET /v1/webhooks/{id}/deliveries) lists every row with
//     its status, attempts, last status code and error for as long as the
//     webhook lives, and redelivery makes a delivered or failed row due
//     again with the same event id and body. River prunes finished jobs
//     and its tables are not a schema the API should expose.
//   - Order per target. An integration event is claimed only when it is the
//     oldest pending one of its (integration, finding) pair, so the issue a
//     tracker creates for a finding exists before the comments that follow
//     it. River has no per-key ordering.
//   - Removing a target ends its pending rows in the same statement
//     (integration removed: dead; webhook deleted: failed) and the events
//     are written in the transaction of the triage change that causes them,
//     in the findings schema, without a second job schema and its
//     migrations in the findings database.
//
// Delivery is at least once: a row leaves pending only when its deliverer
// records the outcome; a process that dies mid-attempt leaves the row due
// again when its lease ends, and receivers drop repeats by the stable id
// each request carries.
package outbox

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// Loop runs round until ctx ends. A round that says there is more to do
// (it handled a full batch) is followed at once by the next; otherwise the
// loop waits every. A failed round is logged with msg and ends the burst.
func Loop(ctx context.Context, every time.Duration, log *slog.Logger, msg string, round func(context.Context) (more bool, err error)) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		for ctx.Err() == nil {
			more, err := round(ctx)
			if err != nil && ctx.Err() == nil {
				log.ErrorContext(ctx, msg, "error", err)
			}
			if err != nil || !more {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Schedule is how an outbox is polled and retried.
type Schedule struct {
	Poll        time.Duration // how often to look for due rows
	Batch       int           // rows claimed per round
	BaseBackoff time.Duration // delay after the first failed attempt; doubles per attempt
	MaxBackoff  time.Duration
	MaxAttempts int // attempts before a row fails for good
}

// Retry returns, for a row whose attempt number attempt just failed, the
// delay until the next attempt and whether that attempt was the last.
func (s Schedule) Retry(attempt int) (time.Duration, bool) {
	return Backoff(s.BaseBackoff, s.MaxBackoff, attempt), attempt >= s.MaxAttempts
}

// Backoff is base·2^(attempt-1), capped at max, ±20% jitter.
func Backoff(base, max time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// Lease is how long a claimed row stays invisible to other workers: longer
// than an attempt may take (Timeout), so that two processes never attempt
// one row at once, and short enough that a row of a dead process is soon
// due again.
const Lease = 2 * time.Minute

// Timeout bounds one delivery, all its requests included.
const Timeout = 30 * time.Second

// Worker delivers the due rows of one outbox until its context ends.
type Worker[T any] struct {
	Schedule
	Log *slog.Logger
	// Name starts the worker's log messages.
	Name string
	// Claim takes up to n due rows, leased for lease.
	Claim func(ctx context.Context, n int, lease time.Duration) ([]T, error)
	// Deliver attempts one row and records the outcome.
	Deliver func(ctx context.Context, row T)
}

// Run claims and delivers batches until ctx ends.
func (w *Worker[T]) Run(ctx context.Context) error {
	return Loop(ctx, w.Poll, w.Log, w.Name+" batch failed", w.Once)
}

// Once claims one batch and delivers its rows concurrently; more says the
// batch was full, so more rows may be due.
func (w *Worker[T]) Once(ctx context.Context) (more bool, err error) {
	// A claim is the start of its rows' attempts: like the attempts, it
	// finishes even while the process stops, so that rows are never left
	// leased by a claim whose answer was dropped.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Timeout)
	rows, err := w.Claim(cctx, w.Batch, Lease)
	cancel()
	if err != nil {
		return false, err
	}
	var wg sync.WaitGroup
	for _, r := range rows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// An attempt in flight finishes even while the process stops.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Timeout)
			defer cancel()
			w.Deliver(dctx, r)
		}()
	}
	wg.Wait()
	return len(rows) >= w.Batch, nil
}
