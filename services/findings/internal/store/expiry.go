package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// Agent is the actor of changes the service makes on its own.
var Agent = Actor{UserID: AgentUserID, Username: AgentUsername, Source: "agent"}

// ReopenExpired reopens up to limit findings whose risk acceptance ended at
// or before now, each as a PATCH to open by the agent would (audit record
// with source agent, thread entry, one event per integration), and returns
// how many it reopened. Rows are taken with SKIP LOCKED, so several findings
// processes share the work, and a finding being triaged at that moment is
// left for the next round.
func (s *Store) ReopenExpired(ctx context.Context, now time.Time, limit int) (int, error) {
	var n int
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id::text, org_id::text, risk_expires_at FROM findings.findings
			WHERE state = 'accepted_risk' AND risk_expires_at <= $1 ORDER BY risk_expires_at, id LIMIT $2 FOR NO KEY UPDATE SKIP LOCKED`, now, limit)
		if err != nil {
			return fmt.Errorf("expired acceptances: %w", err)
		}
		type due struct {
			id, org string
			at      time.Time
		}
		ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
			var d due
			err := r.Scan(&d.id, &d.org, &d.at)
			return d, err
		})
		if err != nil {
			return fmt.Errorf("expired acceptances: %w", err)
		}
		open := string(vocab.Open)
		for _, d := range ds {
			reason := "Risk acceptance expired at " + d.at.UTC().Format(time.RFC3339)
			if _, _, err := s.applyTx(ctx, tx, d.org, d.id, Update{State: &open, StateReason: reason}, Agent, nil); err != nil {
				return fmt.Errorf("reopen %s: %w", d.id, err)
			}
		}
		n = len(ds)
		return nil
	})
	return n, err
}
