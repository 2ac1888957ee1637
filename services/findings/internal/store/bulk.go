package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"
)

// MaxBulk is the most findings one bulk change may touch: the change is one
// transaction holding a row lock on each, so it stays bounded.
const MaxBulk = 1000

// MissingError names a finding of a bulk change that does not exist for
// the organization (unknown, foreign or still in verification).
type MissingError struct{ ID string }

func (e *MissingError) Error() string { return "finding " + e.ID + " not found" }

// Is makes a MissingError an ErrNotFound.
func (e *MissingError) Is(target error) bool { return target == ErrNotFound }

// BulkResult counts what a bulk change did.
type BulkResult struct {
	BatchID          string
	Matched, Changed int
}

// ApplyBulk applies u to the findings given by ids, or else to those
// matching filter (at most MaxBulk), in one transaction: every finding is
// locked (in id order, with the canonical finding of a duplicate link, so
// that concurrent changes queue rather than deadlock; the transaction runs
// again should the server still abort it for one) and changed as a PATCH
// would change it. Its audit records carry one batch id; each integration
// gets one event per scan for the whole batch instead of one per finding,
// and each webhook subscribed to finding.updated one finding.bulk_updated
// message. Any error (a missing id, an invalid duplicate link) rolls
// everything back.
func (s *Store) ApplyBulk(ctx context.Context, orgID string, ids []string, filter *Filter, u Update, actor Actor) (BulkResult, error) {
	res := BulkResult{BatchID: uuid.NewString()}
	err := db.InTxRetrying(ctx, s.Pool, conflictRuns, func(tx pgx.Tx) error {
		var canonical *string // locked with the targets: see applyTx
		if u.DuplicateSet && u.DuplicateOf != nil && validUUID(*u.DuplicateOf) {
			canonical = u.DuplicateOf
		}
		targets, err := lockTargets(ctx, tx, orgID, ids, filter, canonical)
		if err != nil {
			return err
		}
		res.Matched = len(targets)
		changed := map[string][]Change{}
		var order []string
		for _, id := range targets {
			_, changes, err := s.applyTx(ctx, tx, orgID, id, u, actor, &res.BatchID)
			if err != nil {
				var inv *InvalidError
				if errors.As(err, &inv) {
					return &InvalidError{Msg: fmt.Sprintf("finding %s: %s", id, inv.Msg)}
				}
				return err
			}
			if len(changes) > 0 {
				changed[id] = changes
				order = append(order, id)
			}
		}
		res.Changed = len(order)
		comment := u.StateReason
		if u.State == nil && !u.DuplicateSet {
			comment = u.SeverityReason
		}
		if err := emitBatch(ctx, tx, orgID, res.BatchID, order, changed, comment, actor); err != nil {
			return err
		}
		return enqueueBatch(ctx, tx, orgID, res.BatchID, order, changed, actor, comment)
	})
	if err != nil {
		return BulkResult{}, err
	}
	return res, nil
}

// lockTargets returns the ids of the findings to change, locked FOR NO KEY
// UPDATE in id order, with the canonical finding of a duplicate link when
// there is one (locked, but a target only if asked for or matched).
func lockTargets(ctx context.Context, tx pgx.Tx, orgID string, ids []string, filter *Filter, canonical *string) ([]string, error) {
	var rows pgx.Rows
	var err error
	if filter == nil {
		rows, err = tx.Query(ctx, `SELECT id::text, id = ANY($2::uuid[]) FROM findings.findings WHERE org_id = $1 AND verification_status = 'approved'
			AND (id = ANY($2::uuid[]) OR id = $3::uuid) ORDER BY id FOR NO KEY UPDATE`, orgID, db.UUIDArray(ids), canonical)
	} else {
		// The matches are first read without order or lock, so that a filter
		// matching too many is refused after reading MaxBulk+1 index
		// entries: ordered by id under the limit, the statement sorted
		// every match (about a second for 40,000 of 200,000 findings) or
		// walked the whole table in id order. Those found are then locked
		// in id order with the filter checked again, so that a finding
		// changed meanwhile to match no more is left out; one that came to
		// match after the first read is not added.
		f := *filter
		f.OrgID = orgID
		var found pgx.Rows
		var matched []string
		match, matchArgs := f.bulkMatchSQL(MaxBulk + 1)
		found, err = tx.Query(ctx, match, matchArgs...)
		if err != nil {
			return nil, fmt.Errorf("find findings: %w", err)
		}
		if matched, err = pgx.CollectRows(found, pgx.RowTo[string]); err != nil {
			return nil, fmt.Errorf("find findings: %w", err)
		}
		if len(matched) > MaxBulk {
			return nil, &InvalidError{Msg: fmt.Sprintf("filter matches more than %d findings; narrow it or give ids", MaxBulk)}
		}
		where, args := f.where()
		n := len(args)
		rows, err = tx.Query(ctx, fmt.Sprintf(`SELECT f.id::text, coalesce(f.id = ANY($%[1]d::uuid[]) AND %[2]s, false) FROM findings.findings f
			WHERE (f.id = ANY($%[1]d::uuid[]) AND %[2]s) OR (f.id = $%[3]d::uuid AND f.org_id = $%[4]d AND f.verification_status = 'approved')
			ORDER BY f.id FOR NO KEY UPDATE OF f`, n+1, where, n+2, n+3), append(args, db.UUIDArray(matched), canonical, orgID)...)
	}
	if err != nil {
		return nil, fmt.Errorf("lock findings: %w", err)
	}
	var got []string
	var id string
	var target bool
	if _, err := pgx.ForEachRow(rows, []any{&id, &target}, func() error {
		if target {
			got = append(got, id)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("lock findings: %w", err)
	}
	if filter != nil {
		return got, nil
	}
	if len(got) < len(ids) {
		have := make(map[string]bool, len(got))
		for _, id := range got {
			have[id] = true
		}
		for _, id := range ids {
			if !have[id] {
				return nil, &MissingError{ID: id}
			}
		}
	}
	return got, nil
}

// bulkMatchSQL renders the statement reading the ids of the findings f
// matches, at most limit of them, in no particular order (see
// lockTargets), with its arguments. With a scan, they are read from the
// scan's occurrences, which carry copies of their findings' list keys
// (the lock checks the findings themselves again): checking each of the
// organization's findings for an occurrence in the scan read up to all of
// them to find a small scan's.
func (f Filter) bulkMatchSQL(limit int) (string, []any) {
	if f.ScanID != "" {
		where, args := f.scanWhere(true)
		args = append(args, limit)
		return fmt.Sprintf(`SELECT o.finding_id::text FROM findings.occurrences o WHERE %s LIMIT $%d`, where, len(args)), args
	}
	where, args := f.where()
	args = append(args, limit)
	return fmt.Sprintf(`SELECT f.id::text FROM findings.findings f WHERE %s LIMIT $%d`, where, len(args)), args
}
