// Package jobs defines the scan service's background jobs on its durable
// River queue: running a scan, and recovering a start saga that a crash
// interrupted.
package jobs

import (
	"time"

	"github.com/riverqueue/river"
)

// Queues.
const (
	QueueScans       = "scans"
	QueueMaintenance = "scan_maintenance"
)

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

func (RecoverStart) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// SweepStranded fails and refunds started scans whose run job is gone:
// River discards a job that a dying worker held on its last attempt without
// calling the worker again, so without this such a scan would stay pending
// or running and keep its credits.
type SweepStranded struct{}

func (SweepStranded) Kind() string { return "sweep_stranded_scans" }

func (SweepStranded) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: time.Minute}}
}

// SweepInterval is how often stranded scans are looked for, and how long a
// scan must have been idle to count as stranded.
var SweepInterval = time.Minute

// RecoveryDelay is how long a start may take before recovery looks at it.
var RecoveryDelay = 2 * time.Minute
