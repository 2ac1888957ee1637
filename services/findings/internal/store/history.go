package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// AuditEntry is one record of a finding's audit trail.
type AuditEntry struct {
	ID                      int64
	Field, Source           string
	From, To, Reason        *string
	ActorUserID, ActorKeyID *string
	BatchID                 *string
	CreatedAt               time.Time
}

// History returns a page of an approved finding's audit trail, oldest
// first (ties by id), and the number of records.
func (s *Store) History(ctx context.Context, orgID, id string, limit, offset int) ([]AuditEntry, int, error) {
	var total int
	err := s.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM findings.audit_log a WHERE a.finding_id = f.id)
		FROM findings.findings f WHERE f.id = $1 AND f.org_id = $2 AND f.verification_status = 'approved'`, id, orgID).Scan(&total)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("count history: %w", err)
	}
	rows, err := s.Pool.Query(ctx, `SELECT id, field, source, from_value, to_value, reason, actor_user_id::text, actor_key_id, batch_id::text, created_at
		FROM findings.audit_log WHERE finding_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`, id, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("read history: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditEntry, error) {
		var e AuditEntry
		err := r.Scan(&e.ID, &e.Field, &e.Source, &e.From, &e.To, &e.Reason, &e.ActorUserID, &e.ActorKeyID, &e.BatchID, &e.CreatedAt)
		return e, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("read history: %w", err)
	}
	return out, total, nil
}
