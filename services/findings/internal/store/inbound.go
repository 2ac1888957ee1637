package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"
)

// ErrReplay is an inbound event whose delivery key was already accepted.
var ErrReplay = errors.New("inbound event already received")

// ErrNoIntegration is an unknown or removed integration.
var ErrNoIntegration = errors.New("integration not found")

// ActiveIntegration returns an integration that has not been removed.
func (s *Store) ActiveIntegration(ctx context.Context, id string) (Integration, error) {
	row := s.Pool.QueryRow(ctx, `SELECT `+integrationCols+` FROM findings.integrations WHERE id = $1 AND removed_at IS NULL`, id)
	i, err := scanIntegration(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return i, ErrNoIntegration
	}
	if err != nil {
		return i, fmt.Errorf("read integration: %w", err)
	}
	return i, nil
}

// MapUser maps an integration's external user (a git host login or a chat
// user id) to a user of its organization, replacing an earlier mapping.
func (s *Store) MapUser(ctx context.Context, integrationID, external, userID string) error {
	if _, err := s.Pool.Exec(ctx, `INSERT INTO findings.integration_users (integration_id, external_user, user_id) VALUES ($1, $2, $3)
		ON CONFLICT (integration_id, external_user) DO UPDATE SET user_id = EXCLUDED.user_id, created_at = now()`, integrationID, external, userID); err != nil {
		return fmt.Errorf("map user: %w", err)
	}
	return nil
}

// MappedUser returns the user an external user is mapped to ("" when none).
func (s *Store) MappedUser(ctx context.Context, integrationID, external string) (string, error) {
	var uid string
	err := s.Pool.QueryRow(ctx, `SELECT user_id::text FROM findings.integration_users WHERE integration_id = $1 AND external_user = $2`,
		integrationID, external).Scan(&uid)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("mapped user: %w", err)
	}
	return uid, nil
}

// RecordRef remembers that the integration created ref (e.g. "comment:42")
// on the receiver's side for a finding. Recording it again is a no-op.
func (s *Store) RecordRef(ctx context.Context, integrationID, findingID, ref string) error {
	if _, err := s.Pool.Exec(ctx, `INSERT INTO findings.integration_refs (integration_id, ref, finding_id) VALUES ($1, $2, $3)
		ON CONFLICT (integration_id, ref) DO NOTHING`, integrationID, ref, findingID); err != nil {
		return fmt.Errorf("record ref: %w", err)
	}
	return nil
}

// FindingByRef returns the finding the integration created ref for, or ""
// when it created no such thing.
func (s *Store) FindingByRef(ctx context.Context, integrationID, ref string) (string, error) {
	var id string
	err := s.Pool.QueryRow(ctx, `SELECT finding_id::text FROM findings.integration_refs WHERE integration_id = $1 AND ref = $2`,
		integrationID, ref).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find ref: %w", err)
	}
	return id, nil
}

// Inbound is what an inbound event does to a finding: a state change
// (through the same path as PATCH) or a thread entry.
type Inbound struct {
	FindingID string
	// State, when set, changes the finding's state with Reason.
	State *string
	// Comment makes a thread entry when State is nil.
	Comment *string
	Reason  string
}

// InboundResult is the finding after an inbound event.
type InboundResult struct {
	State   string
	EntryID string // set for a thread entry without a change
	Changed bool
}

// ApplyInbound records the event's delivery key and applies in to the
// finding in one transaction: a replayed key (ErrReplay), an unknown
// finding (ErrNotFound) or any failure leaves everything as it was,
// including the key, so a corrected redelivery is accepted. Receipts older
// than 30 days are dropped as new ones arrive.
func (s *Store) ApplyInbound(ctx context.Context, integ Integration, deliveryKey string, in Inbound, actor Actor) (InboundResult, error) {
	var res InboundResult
	err := db.InTxRetrying(ctx, s.Pool, conflictRuns, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO findings.inbound_receipts (integration_id, delivery_key) VALUES ($1, $2)
			ON CONFLICT DO NOTHING`, integ.ID, deliveryKey)
		if err != nil {
			return fmt.Errorf("record receipt: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return ErrReplay
		}
		if _, err := tx.Exec(ctx, `DELETE FROM findings.inbound_receipts WHERE integration_id = $1 AND received_at < now() - interval '30 days'`,
			integ.ID); err != nil {
			return fmt.Errorf("prune receipts: %w", err)
		}
		if in.State != nil {
			out, changes, err := s.applyTx(ctx, tx, integ.OrgID, in.FindingID, Update{State: in.State, StateReason: in.Reason}, actor, nil)
			if err != nil {
				return err
			}
			res = InboundResult{State: out.State, Changed: len(changes) > 0}
			return nil
		}
		if res.EntryID, err = commentTx(ctx, tx, integ.OrgID, in.FindingID, nil, in.Comment, actor); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT state FROM findings.findings WHERE id = $1`, in.FindingID).Scan(&res.State)
	})
	return res, err
}

// Receipt records a delivery key alone (an event that touches no finding),
// with ErrReplay for a key already accepted.
func (s *Store) Receipt(ctx context.Context, integrationID, deliveryKey string) error {
	tag, err := s.Pool.Exec(ctx, `INSERT INTO findings.inbound_receipts (integration_id, delivery_key) VALUES ($1, $2)
		ON CONFLICT DO NOTHING`, integrationID, deliveryKey)
	if err != nil {
		return fmt.Errorf("record receipt: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrReplay
	}
	return nil
}
