package jobs

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/vulnscan/vulnscan/pkg/eventpub"
	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
)

// EventNamespace derives the estimation events' ids (eventpub.Publisher).
var EventNamespace = uuid.MustParse("0b8f7d0e-5a61-4c59-a4a4-5d2f8e1c7b3a")

// PublishEstimationEventWorker runs PublishEstimationEvent jobs: it
// publishes the estimation as it is now (its status is final).
type PublishEstimationEventWorker struct {
	river.WorkerDefaults[PublishEstimationEvent]
	Store  *store.Store
	Events *eventpub.Publisher
}

func (w *PublishEstimationEventWorker) Work(ctx context.Context, job *river.Job[PublishEstimationEvent]) error {
	e, err := w.Store.GetEstimation(ctx, job.Args.OrgID, job.Args.EstimationID)
	if err != nil {
		return fmt.Errorf("load estimation %s: %w", job.Args.EstimationID, err)
	}
	return w.Events.Publish(ctx, eventpub.Event{SubjectID: e.ID, OrgID: e.OrgID, Type: job.Args.Type, OccurredAt: e.UpdatedAt,
		Key: "estimation", Subject: EventData(e)})
}

// EventData is the estimation as its events carry it, in JSON-compatible
// values.
func EventData(e store.Estimation) map[string]any {
	repos := make([]any, len(e.Repos))
	for i, r := range e.Repos {
		m := map[string]any{"repo_url": r.RepoURL, "source": r.Source, "branch": r.Branch, "commit_sha": r.CommitSHA,
			"status": string(r.Status), "credits": float64(r.Credits), "from_cache": r.FromCache, "error": nil}
		if r.Error != "" {
			m["error"] = r.Error
		}
		repos[i] = m
	}
	return map[string]any{"id": e.ID, "name": e.Name, "status": string(e.Status), "total_credits": float64(e.TotalCredits), "repos": repos,
		"created_at": eventpub.Time(&e.CreatedAt), "updated_at": eventpub.Time(&e.UpdatedAt)}
}
