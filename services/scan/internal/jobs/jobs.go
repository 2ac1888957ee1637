// Package jobs owns the scan service's background work on its durable River
// queue: every job's arguments, a type named by what the job does, and the
// worker that runs it, named the same with Worker appended:
//
//   - RunScan / RunScanWorker: run one started scan;
//   - RecoverStart / RecoverStartWorker: finish or undo a start saga that a
//     crash interrupted;
//   - UndoCancelledStart / UndoCancelledStartWorker: give back what a scan
//     cancelled while pending took;
//   - SweepStranded / SweepStrandedWorker: fail and refund started scans
//     whose run job is gone;
//   - PublishScanEvent / PublishScanEventWorker: publish a scan's end to
//     the organization's webhooks.
//
// Queue inserts them in the caller's transaction for the API (it implements
// lifecycle.Queue) and for the store (Ended). What the workers share with
// the API lives in package lifecycle.
package jobs

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// Queues.
const (
	QueueScans       = "scans"
	QueueMaintenance = "scan_maintenance"
)

// DefaultSweepInterval is how often stranded scans are looked for, and how
// long a scan must have been idle to count as stranded.
const DefaultSweepInterval = time.Minute

// maintenance is how the jobs that compensate or publish are retried: often
// (they only call other services) and once per argument set.
func maintenance() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// RunScan runs one scan.
type RunScan struct {
	ScanID string `json:"scan_id"`
}

func (RunScan) Kind() string { return "run_scan" }

// InsertOpts makes a scan's job unique and retried a few times.
func (RunScan) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueScans, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// RecoverStart finishes or undoes the start of a scan whose request did not
// complete. It is inserted with the scan row, scheduled after the time a
// start may take; for a scan that started normally it does nothing.
type RecoverStart struct {
	ScanID string `json:"scan_id"`
}

func (RecoverStart) Kind() string { return "recover_scan_start" }

func (RecoverStart) InsertOpts() river.InsertOpts { return maintenance() }

// UndoCancelledStart gives back what a scan cancelled while still pending
// took: its credits (refund) and its estimation's claim (release). It is
// inserted in the transaction that cancels the scan; both steps are
// idempotent by the scan id, so it can run any number of times.
type UndoCancelledStart struct {
	ScanID string `json:"scan_id"`
}

func (UndoCancelledStart) Kind() string { return "undo_cancelled_scan_start" }

func (UndoCancelledStart) InsertOpts() river.InsertOpts { return maintenance() }

// SweepStranded fails and refunds started scans whose run job is gone:
// River discards a job that a dying worker held on its last attempt without
// calling the worker again, so without this such a scan would stay pending
// or running and keep its credits.
type SweepStranded struct{}

func (SweepStranded) Kind() string { return "sweep_stranded_scans" }

func (SweepStranded) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: time.Minute}}
}

// PublishScanEvent publishes a scan's end (scan.completed, scan.failed or
// scan.cancelled) to the organization's webhooks through the findings
// service. It is inserted in the transaction that ends the scan and retried
// while the findings service is unreachable; the event's id is derived from
// the scan and the type, so publishing twice delivers once.
type PublishScanEvent struct {
	ScanID string `json:"scan_id"`
	Type   string `json:"type"`
}

func (PublishScanEvent) Kind() string { return "publish_scan_event" }

func (PublishScanEvent) InsertOpts() river.InsertOpts { return maintenance() }

// EventNamespace derives the scan events' ids (eventpub.Publisher), so
// publishing a scan's end twice delivers it once.
var EventNamespace = uuid.MustParse("6f0e4c52-8a53-4d7e-9b0e-3f1c2a7d9e41")

// Queue inserts the scan jobs in the caller's transaction. River is set
// once the client exists (the client needs the workers first).
type Queue struct {
	River *river.Client[pgx.Tx]
}

// RecoverStart schedules the recovery of a start after delay.
func (q *Queue) RecoverStart(ctx context.Context, tx pgx.Tx, scanID string, delay time.Duration) error {
	_, err := q.River.InsertTx(ctx, tx, RecoverStart{ScanID: scanID}, &river.InsertOpts{ScheduledAt: time.Now().Add(delay)})
	return err
}

// RunScan queues a started scan.
func (q *Queue) RunScan(ctx context.Context, tx pgx.Tx, scanID string) error {
	_, err := q.River.InsertTx(ctx, tx, RunScan{ScanID: scanID}, nil)
	return err
}

// UndoCancelledStart queues the undo of a cancelled pending scan's start.
func (q *Queue) UndoCancelledStart(ctx context.Context, tx pgx.Tx, scanID string) error {
	_, err := q.River.InsertTx(ctx, tx, UndoCancelledStart{ScanID: scanID}, nil)
	return err
}

// Ended is the store's Ended hook: it queues the scan's webhook event in
// the transaction that ends the scan.
func (q *Queue) Ended(ctx context.Context, tx pgx.Tx, scanID string, status vocab.ScanStatus) error {
	_, err := q.River.InsertTx(ctx, tx, PublishScanEvent{ScanID: scanID, Type: "scan." + string(status)}, nil)
	return err
}
