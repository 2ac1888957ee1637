package jobs

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/vulnscan/vulnscan/pkg/eventpub"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// PublishScanEventWorker runs PublishScanEvent jobs.
type PublishScanEventWorker struct {
	river.WorkerDefaults[PublishScanEvent]
	Store  *store.Store
	Events *eventpub.Publisher
}

// Work publishes the scan as it is now (its status is final), at the time
// it ended.
func (w *PublishScanEventWorker) Work(ctx context.Context, job *river.Job[PublishScanEvent]) error {
	sc, err := w.Store.ByID(ctx, job.Args.ScanID)
	if err != nil {
		return fmt.Errorf("load scan %s: %w", job.Args.ScanID, err)
	}
	ev := eventpub.Event{SubjectID: sc.ID, OrgID: sc.OrgID, Type: job.Args.Type, OccurredAt: sc.UpdatedAt, Key: "scan", Subject: EventData(sc)}
	if sc.CompletedAt != nil {
		ev.OccurredAt = *sc.CompletedAt
	}
	return w.Events.Publish(ctx, ev)
}

// EventData is the scan as its events carry it (never its auth
// instructions), in JSON-compatible values.
func EventData(sc store.Scan) map[string]any {
	repos := make([]any, len(sc.Repos))
	for i, r := range sc.Repos {
		repos[i] = map[string]any{"url": r.URL, "branch": r.Branch, "source": r.Source}
	}
	targets := make([]any, len(sc.TargetURLs))
	for i, t := range sc.TargetURLs {
		targets[i] = t
	}
	m := map[string]any{
		"id": sc.ID, "status": string(sc.Status), "scan_type": sc.ScanType, "cost_estimation_id": sc.EstimationID,
		"repos": repos, "target_urls": targets, "credits_used": float64(sc.Credits), "error": nil,
		"created_at": eventpub.Time(&sc.CreatedAt), "started_at": eventpub.Time(sc.StartedAt), "completed_at": eventpub.Time(sc.CompletedAt),
	}
	if sc.Error != nil {
		m["error"] = *sc.Error
	}
	return m
}
