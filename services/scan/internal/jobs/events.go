package jobs

import "github.com/riverqueue/river"

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

func (PublishScanEvent) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}
