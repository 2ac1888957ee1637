// Package events publishes the scan service's webhook events (scan.completed,
// scan.failed, scan.cancelled) to the findings service, which owns the
// organizations' webhooks. The job is queued with the status change
// (store.Store.Ended) and retried by River while findings is unreachable.
package events

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/jobs"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// namespace derives event ids: the same scan and type always give the
// same id, which the findings service records once.
var namespace = uuid.MustParse("6f0e4c52-8a53-4d7e-9b0e-3f1c2a7d9e41")

// EventID is the id of a scan's event of type typ.
func EventID(scanID, typ string) string {
	return uuid.NewSHA1(namespace, []byte(scanID+"/"+typ)).String()
}

// Queue returns the store's Ended hook: it inserts the event's job in the
// transaction that ends the scan.
func Queue(rc func() *river.Client[pgx.Tx]) func(ctx context.Context, tx pgx.Tx, scanID, status string) error {
	return func(ctx context.Context, tx pgx.Tx, scanID, status string) error {
		_, err := rc().InsertTx(ctx, tx, jobs.PublishScanEvent{ScanID: scanID, Type: "scan." + status}, nil)
		return err
	}
}

// Worker runs PublishScanEvent jobs.
type Worker struct {
	river.WorkerDefaults[jobs.PublishScanEvent]
	Store    *store.Store
	Webhooks findingsv1.WebhookEventServiceClient
}

// Work publishes the scan as it is now (its status is final).
func (w *Worker) Work(ctx context.Context, job *river.Job[jobs.PublishScanEvent]) error {
	sc, err := w.Store.ByID(ctx, job.Args.ScanID)
	if err != nil {
		return fmt.Errorf("load scan %s: %w", job.Args.ScanID, err)
	}
	data, err := structpb.NewStruct(map[string]any{"scan": Data(sc)})
	if err != nil {
		return fmt.Errorf("encode scan event: %w", err)
	}
	occurred := sc.UpdatedAt
	if sc.CompletedAt != nil {
		occurred = *sc.CompletedAt
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err = w.Webhooks.PublishEvent(cctx, &findingsv1.PublishEventRequest{EventId: EventID(sc.ID, job.Args.Type), OrgId: sc.OrgID,
		Type: job.Args.Type, OccurredAt: timestamppb.New(occurred), Data: data})
	if err != nil {
		return fmt.Errorf("publish %s of scan %s: %w", job.Args.Type, sc.ID, err)
	}
	return nil
}

// Data is the scan as its events carry it (never its auth instructions),
// in JSON-compatible values.
func Data(sc store.Scan) map[string]any {
	repos := make([]any, len(sc.Repos))
	for i, r := range sc.Repos {
		repos[i] = map[string]any{"url": r.URL, "branch": r.Branch, "source": r.Source}
	}
	targets := make([]any, len(sc.TargetURLs))
	for i, t := range sc.TargetURLs {
		targets[i] = t
	}
	m := map[string]any{
		"id": sc.ID, "status": sc.Status, "scan_type": sc.ScanType, "cost_estimation_id": sc.EstimationID,
		"repos": repos, "target_urls": targets, "credits_used": float64(sc.Credits), "error": nil,
		"created_at": rfc3339(&sc.CreatedAt), "started_at": rfc3339(sc.StartedAt), "completed_at": rfc3339(sc.CompletedAt),
	}
	if sc.Error != nil {
		m["error"] = *sc.Error
	}
	return m
}

func rfc3339(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}
