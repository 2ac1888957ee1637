package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"
)

// A finding's triage thread: comments and reactions, each an entry; a
// comment is also told to the integrations and webhooks.

// addEntry writes one thread entry and returns its id.
func addEntry(ctx context.Context, tx pgx.Tx, findingID string, reaction, comment *string, actor Actor) (string, error) {
	eid := uuid.NewString()
	if _, err := tx.Exec(ctx, `INSERT INTO findings.triage_entries (id, finding_id, reaction, comment, user_id, username, source)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, eid, findingID, reaction, comment, actor.UserID, actor.Username, actor.Source); err != nil {
		return "", fmt.Errorf("insert triage entry: %w", err)
	}
	return eid, nil
}

// AddComment adds a comment to an approved finding's thread and enqueues
// it for the integrations.
func (s *Store) AddComment(ctx context.Context, orgID, id, comment string, actor Actor) (string, error) {
	var eid string
	err := db.InTxRetrying(ctx, s.Pool, conflictRuns, func(tx pgx.Tx) error {
		var err error
		eid, err = commentTx(ctx, tx, orgID, id, nil, &comment, actor)
		return err
	})
	return eid, err
}

// commentTx adds a thread entry (a comment, or a reaction that changes
// nothing) to an approved finding inside tx and enqueues it for the
// integrations.
func commentTx(ctx context.Context, tx pgx.Tx, orgID, id string, reaction, comment *string, actor Actor) (string, error) {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM findings.findings WHERE id = $1 AND org_id = $2 AND verification_status = 'approved'`, id, orgID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("find finding: %w", err)
	}
	eid, err := addEntry(ctx, tx, id, reaction, comment, actor)
	if err != nil {
		return "", err
	}
	c := ""
	if comment != nil {
		c = *comment
		if err := emitCommented(ctx, tx, orgID, id, c, actor); err != nil {
			return "", err
		}
	}
	return eid, enqueue(ctx, tx, orgID, id, "finding.commented", actor, nil, c)
}
