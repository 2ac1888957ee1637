package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// Change is one changed field, as the audit trail records it.
type Change struct {
	Field  string  `json:"field"`
	From   *string `json:"from"`
	To     *string `json:"to"`
	Reason string  `json:"reason,omitempty"`
}

// Update is a requested triage change. Nil fields stay as they are.
type Update struct {
	State, Severity *string
	// DuplicateSet says duplicate_of was given; DuplicateOf nil then
	// removes the link.
	DuplicateSet   bool
	DuplicateOf    *string
	StateReason    string
	SeverityReason string
	// ExpiresAt ends a risk acceptance (only with State accepted_risk).
	ExpiresAt *time.Time
}

// Updated is a finding's triage fields after a change.
type Updated struct {
	ID, State, Severity string
	DuplicateOf         *string
	ExpiresAt           *time.Time
}

// conflictRuns is how many times a triage change runs when the server
// aborts it for a deadlock or a serialization failure (see
// db.InTxRetrying). Locks are taken in id order, so this is a safety net.
const conflictRuns = 4

// Apply applies u to an approved finding of the organization in one
// transaction with its audit records, triage thread entry and outbox events.
func (s *Store) Apply(ctx context.Context, orgID, id string, u Update, actor Actor) (Updated, error) {
	var out Updated
	err := db.InTxRetrying(ctx, s.Pool, conflictRuns, func(tx pgx.Tx) error {
		var err error
		out, _, err = s.applyTx(ctx, tx, orgID, id, u, actor, nil)
		return err
	})
	return out, err
}

// applyTx applies u to one finding inside tx. With a batch id (a bulk
// change) the audit records carry it and no per-finding outbox event is
// written: the caller writes one event for the batch.
func (s *Store) applyTx(ctx context.Context, tx pgx.Tx, orgID, id string, u Update, actor Actor, batchID *string) (Updated, []Change, error) {
	var out Updated
	var changes []Change
	err := func() error {
		// The finding is locked FOR NO KEY UPDATE, the mode its UPDATE
		// takes, which lets other transactions' foreign key checks (a
		// duplicate link to it, a thread entry) pass. A canonical finding
		// is locked too, in the same statement and id order (as bulk
		// changes lock theirs), so that it cannot become a duplicate itself
		// meanwhile, nor this finding gain duplicates of its own (a link to
		// it locks it), and two changes crossing the same pair queue
		// instead of deadlocking.
		if u.DuplicateSet && u.DuplicateOf != nil && *u.DuplicateOf != id && validUUID(*u.DuplicateOf) {
			if _, err := tx.Exec(ctx, `SELECT 1 FROM findings.findings WHERE id IN ($1, $2) AND org_id = $3
				ORDER BY id FOR NO KEY UPDATE`, id, *u.DuplicateOf, orgID); err != nil {
				return fmt.Errorf("lock findings: %w", err)
			}
		}
		var repoKey, state, severity string
		var dup *string
		var expires *time.Time
		err := tx.QueryRow(ctx, `SELECT repo_key, state, severity, duplicate_of::text, risk_expires_at FROM findings.findings
			WHERE id = $1 AND org_id = $2 AND verification_status = 'approved' FOR NO KEY UPDATE`, id, orgID).Scan(&repoKey, &state, &severity, &dup, &expires)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("lock finding: %w", err)
		}
		newState, newSev, newDup := state, severity, dup
		if u.DuplicateSet {
			if u.DuplicateOf != nil {
				if err := checkCanonical(ctx, tx, orgID, id, repoKey, *u.DuplicateOf); err != nil {
					return err
				}
				newDup, newState = u.DuplicateOf, string(vocab.Resolved)
			} else if dup != nil {
				newDup, newState = nil, string(vocab.Open)
			}
		}
		if u.State != nil {
			newState = *u.State
			if newState != string(vocab.Resolved) && newDup != nil {
				newDup = nil // a duplicate link means closed: moving on drops it
			}
		}
		if u.Severity != nil {
			newSev = *u.Severity
		}
		// A risk acceptance's end is set by accepting (none: until changed)
		// and dropped when the finding leaves accepted_risk.
		newExpires := expires
		switch {
		case u.State != nil && *u.State == string(vocab.AcceptedRisk):
			newExpires = u.ExpiresAt
		case newState != string(vocab.AcceptedRisk):
			newExpires = nil
		}

		if newState != state {
			changes = append(changes, Change{Field: "state", From: &state, To: &newState, Reason: u.StateReason})
		}
		if newSev != severity {
			changes = append(changes, Change{Field: "severity", From: &severity, To: &newSev, Reason: u.SeverityReason})
		}
		if !eqPtr(dup, newDup) {
			changes = append(changes, Change{Field: "duplicate_of", From: dup, To: newDup, Reason: u.StateReason})
		}
		if from, to := timeText(expires), timeText(newExpires); !eqPtr(from, to) {
			changes = append(changes, Change{Field: "risk_expires_at", From: from, To: to, Reason: u.StateReason})
		}
		if len(changes) > 0 {
			if _, err := tx.Exec(ctx, `UPDATE findings.findings SET state = $2, severity = $3, severity_rank = $4, duplicate_of = $5, risk_expires_at = $6,
				updated_at = CASE WHEN state <> $2 OR severity <> $3 THEN now() ELSE updated_at END WHERE id = $1`,
				id, newState, newSev, SeverityRank(newSev), newDup, newExpires); err != nil {
				return fmt.Errorf("update finding: %w", err)
			}
		}

		// The thread entry: the reaction is the state when the request
		// touched it, the comment the reason that goes with it.
		var reaction, comment *string
		if u.State != nil || u.DuplicateSet {
			reaction = &newState
			if u.StateReason != "" {
				comment = &u.StateReason
			}
		} else if u.SeverityReason != "" {
			comment = &u.SeverityReason
		}
		if err := s.recordChange(ctx, tx, orgID, id, actor, changes, reaction, comment, "finding.updated", batchID); err != nil {
			return err
		}
		out = Updated{ID: id, State: newState, Severity: newSev, DuplicateOf: newDup, ExpiresAt: newExpires}
		return nil
	}()
	return out, changes, err
}

// timeText renders a time for the audit trail (RFC 3339, UTC, to the
// microsecond Postgres keeps).
func timeText(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
	return &s
}

func eqPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// validUUID reports whether s parses as a uuid (a canonical id that does
// not is refused by checkCanonical, not sent to the server as one).
func validUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil
}

// checkCanonical checks that canonical may be the duplicate target of id.
func checkCanonical(ctx context.Context, tx pgx.Tx, orgID, id, repoKey, canonical string) error {
	if canonical == id {
		return &InvalidError{Msg: "duplicate_of must not be the finding itself"}
	}
	var cRepo string
	var cDup *string
	err := tx.QueryRow(ctx, `SELECT repo_key, duplicate_of::text FROM findings.findings
		WHERE id = $1 AND org_id = $2 AND verification_status = 'approved'`, canonical, orgID).Scan(&cRepo, &cDup)
	if errors.Is(err, pgx.ErrNoRows) {
		return &InvalidError{Msg: "duplicate_of: canonical finding not found"}
	}
	if err != nil {
		return fmt.Errorf("canonical finding: %w", err)
	}
	if cRepo != repoKey {
		return &InvalidError{Msg: "duplicate_of must be a finding of the same repository"}
	}
	if cDup != nil {
		return &InvalidError{Msg: "duplicate_of must not itself be a duplicate"}
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM findings.findings WHERE duplicate_of = $1`, id).Scan(&n); err != nil {
		return fmt.Errorf("count duplicates: %w", err)
	}
	if n > 0 {
		return &InvalidError{Msg: "duplicate_of: this finding is the canonical finding of other duplicates"}
	}
	return nil
}

// recordChange writes the audit records of changes, one triage thread
// entry (when reaction or comment is set, or anything changed) and, when
// anything changed, one outbox event per active integration.
func (s *Store) recordChange(ctx context.Context, tx pgx.Tx, orgID, id string, actor Actor, changes []Change, reaction, comment *string, event string, batchID *string) error {
	for _, c := range changes {
		var reason *string
		if c.Reason != "" {
			reason = &c.Reason
		}
		if _, err := tx.Exec(ctx, `INSERT INTO findings.audit_log (finding_id, org_id, field, from_value, to_value, reason, actor_user_id, actor_key_id, source, batch_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, id, orgID, c.Field, c.From, c.To, reason, actor.UserID, nullIfEmpty(actor.KeyID), actor.Source, batchID); err != nil {
			return fmt.Errorf("insert audit record: %w", err)
		}
	}
	if reaction != nil || comment != nil || len(changes) > 0 {
		if _, err := addEntry(ctx, tx, id, reaction, comment, actor); err != nil {
			return err
		}
	}
	if len(changes) == 0 || batchID != nil {
		return nil
	}
	c := ""
	if comment != nil {
		c = *comment
	}
	if err := emitUpdated(ctx, tx, orgID, []string{id}, func(string) []Change { return changes }, c, actor); err != nil {
		return err
	}
	return enqueue(ctx, tx, orgID, id, event, actor, changes, c)
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
