package jobs

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/vulnscan/vulnscan/pkg/eventpub"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// eventNamespace derives the scan events' ids.
var eventNamespace = uuid.MustParse("6f0e4c52-8a53-4d7e-9b0e-3f1c2a7d9e41")

// EventID is the id of a scan's event of type typ.
func EventID(scanID, typ string) string { return eventpub.ID(eventNamespace, scanID, typ) }

// PublishScanEventWorker runs PublishScanEvent jobs.
type PublishScanEventWorker struct {
	river.WorkerDefaults[PublishScanEvent]
	Store    *store.Store
	Webhooks findingsv1.WebhookEventServiceClient
}

// Work publishes the scan as it is now (its status is final).
func (w *PublishScanEventWorker) Work(ctx context.Context, job *river.Job[PublishScanEvent]) error {
	sc, err := w.Store.ByID(ctx, job.Args.ScanID)
	if err != nil {
		return fmt.Errorf("load scan %s: %w", job.Args.ScanID, err)
	}
	occurred := sc.UpdatedAt
	if sc.CompletedAt != nil {
		occurred = *sc.CompletedAt
	}
	return eventpub.Publish(ctx, w.Webhooks, eventpub.Event{ID: EventID(sc.ID, job.Args.Type), OrgID: sc.OrgID, Type: job.Args.Type,
		OccurredAt: occurred, Key: "scan", Subject: EventData(sc)})
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
