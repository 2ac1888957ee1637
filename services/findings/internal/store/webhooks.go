package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/services/findings/internal/webhook"
)

// The outbound webhooks' finding events, written in the changing
// transaction (package webhook delivers them): finding.created when a
// finding becomes visible (approved at intake or by an operator),
// finding.updated for every triage change of one finding (PATCH, expiry,
// reopened by a later scan), one finding.bulk_updated per bulk change for
// the webhooks subscribed to finding.updated, and finding.commented for a
// comment.

func hookActor(a Actor) *webhook.Actor {
	return &webhook.Actor{UserID: a.UserID, Username: a.Username, Source: a.Source}
}

// emitUpdated writes one finding.updated event per finding of ids, each
// with its changes.
func emitUpdated(ctx context.Context, tx pgx.Tx, orgID string, ids []string, changes func(id string) []Change, comment string, actor Actor) error {
	items := make([]webhook.FindingItem, len(ids))
	for i, id := range ids {
		items[i] = webhook.FindingItem{ID: id, Changes: changes(id), Comment: comment}
	}
	return webhook.EmitFindings(ctx, tx, orgID, webhook.FindingUpdated, items, hookActor(actor))
}

// emitBatch writes the one finding.bulk_updated event of a bulk change:
// the changed findings of ids, each with its changes.
func emitBatch(ctx context.Context, tx pgx.Tx, orgID, batchID string, ids []string, changes map[string][]Change, comment string, actor Actor) error {
	items := make([]webhook.FindingItem, len(ids))
	for i, id := range ids {
		items[i] = webhook.FindingItem{ID: id, Changes: changes[id]}
	}
	return webhook.EmitBatch(ctx, tx, orgID, batchID, items, comment, hookActor(actor))
}

// emitCreated writes one finding.created event per finding of ids.
func emitCreated(ctx context.Context, tx pgx.Tx, orgID string, ids []string) error {
	items := make([]webhook.FindingItem, len(ids))
	for i, id := range ids {
		items[i] = webhook.FindingItem{ID: id}
	}
	return webhook.EmitFindings(ctx, tx, orgID, webhook.FindingCreated, items, nil)
}

// emitCommented writes a finding.commented event.
func emitCommented(ctx context.Context, tx pgx.Tx, orgID, id, comment string, actor Actor) error {
	return webhook.EmitFindings(ctx, tx, orgID, webhook.FindingCommented, []webhook.FindingItem{{ID: id, Comment: comment}}, hookActor(actor))
}
