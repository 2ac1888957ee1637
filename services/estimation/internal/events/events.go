// Package events publishes the estimation service's webhook events
// (estimation.completed for a completed or partial estimation,
// estimation.failed for a failed one) to the findings service, which owns
// the organizations' webhooks. The job is inserted in the transaction that
// ends the estimation (store.Store.Ended) and retried by River while
// findings is unreachable.
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
	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
)

// PublishArgs publishes one estimation's end.
type PublishArgs struct {
	EstimationID string `json:"estimation_id"`
	OrgID        string `json:"org_id"`
	Type         string `json:"type"`
}

func (PublishArgs) Kind() string { return "publish_estimation_event" }

func (PublishArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// namespace derives event ids: one estimation and type, one id, which the
// findings service records once.
var namespace = uuid.MustParse("0b8f7d0e-5a61-4c59-a4a4-5d2f8e1c7b3a")

// EventID is the id of an estimation's event of type typ.
func EventID(estimationID, typ string) string {
	return uuid.NewSHA1(namespace, []byte(estimationID+"/"+typ)).String()
}

// TypeOf is the event type of a terminal estimation status.
func TypeOf(status string) string {
	if status == store.StatusCompleted || status == store.StatusPartial {
		return "estimation.completed"
	}
	return "estimation.failed"
}

// Queue returns the store's Ended hook.
func Queue(rc func() *river.Client[pgx.Tx]) func(ctx context.Context, tx pgx.Tx, id, orgID, status string) error {
	return func(ctx context.Context, tx pgx.Tx, id, orgID, status string) error {
		_, err := rc().InsertTx(ctx, tx, PublishArgs{EstimationID: id, OrgID: orgID, Type: TypeOf(status)}, nil)
		return err
	}
}

// Worker runs PublishArgs jobs.
type Worker struct {
	river.WorkerDefaults[PublishArgs]
	Store    *store.Store
	Webhooks findingsv1.WebhookEventServiceClient
}

// Work publishes the estimation as it is now (its status is final).
func (w *Worker) Work(ctx context.Context, job *river.Job[PublishArgs]) error {
	e, err := w.Store.GetEstimation(ctx, job.Args.OrgID, job.Args.EstimationID)
	if err != nil {
		return fmt.Errorf("load estimation %s: %w", job.Args.EstimationID, err)
	}
	data, err := structpb.NewStruct(map[string]any{"estimation": Data(e)})
	if err != nil {
		return fmt.Errorf("encode estimation event: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err = w.Webhooks.PublishEvent(cctx, &findingsv1.PublishEventRequest{EventId: EventID(e.ID, job.Args.Type), OrgId: e.OrgID,
		Type: job.Args.Type, OccurredAt: timestamppb.New(e.UpdatedAt), Data: data})
	if err != nil {
		return fmt.Errorf("publish %s of estimation %s: %w", job.Args.Type, e.ID, err)
	}
	return nil
}

// Data is the estimation as its events carry it, in JSON-compatible values.
func Data(e store.Estimation) map[string]any {
	repos := make([]any, len(e.Repos))
	for i, r := range e.Repos {
		m := map[string]any{"repo_url": r.RepoURL, "source": r.Source, "branch": r.Branch, "commit_sha": r.CommitSHA,
			"status": r.Status, "credits": float64(r.Credits), "from_cache": r.FromCache, "error": nil}
		if r.Error != "" {
			m["error"] = r.Error
		}
		repos[i] = m
	}
	return map[string]any{"id": e.ID, "name": e.Name, "status": e.Status, "total_credits": float64(e.TotalCredits), "repos": repos,
		"created_at": e.CreatedAt.UTC().Format(time.RFC3339Nano), "updated_at": e.UpdatedAt.UTC().Format(time.RFC3339Nano)}
}
