package jobs

import "github.com/riverqueue/river"

// UndoCancelledStart gives back what a scan cancelled while still pending
// took: its credits (refund) and its estimation's claim (release). It is
// inserted in the transaction that cancels the scan; both steps are
// idempotent by the scan id, so it can run any number of times.
type UndoCancelledStart struct {
	ScanID string `json:"scan_id"`
}

func (UndoCancelledStart) Kind() string { return "undo_cancelled_scan_start" }

func (UndoCancelledStart) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}
