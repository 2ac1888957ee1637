package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"
)

// foldLockKey is the advisory lock that lets one FoldCounts run at a time
// across replicas: two folds deleting overlapping delta rows in different
// orders could otherwise deadlock each other.
const foldLockKey = 0x66696e64636e74 // "findcnt"

// FoldCounts replaces all rows of up to keys counter keys (of each counter
// table: finding_counts and finding_search_counts) that have pending
// deltas by a single settled row holding their sum (none when the sum is
// zero), and returns how many rows it removed. A key's rows are deleted and
// their sum inserted by one statement, so every snapshot sees the same
// total before and after; deltas appended meanwhile are not touched and
// wait for the next fold. When another fold is running it returns 0 at once.
func (s *Store) FoldCounts(ctx context.Context, keys int) (int64, error) {
	var removed int64
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var locked bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, int64(foldLockKey)).Scan(&locked); err != nil {
			return fmt.Errorf("fold lock: %w", err)
		}
		if !locked {
			return nil
		}
		if err := tx.QueryRow(ctx, `WITH k AS (
				SELECT DISTINCT org_id, scan_id, severity, state FROM findings.finding_counts WHERE pending LIMIT $1
			), gone AS (
				DELETE FROM findings.finding_counts c USING k
				WHERE (c.org_id, c.scan_id, c.severity, c.state) = (k.org_id, k.scan_id, k.severity, k.state)
				RETURNING c.org_id, c.scan_id, c.severity, c.state, c.n
			), folded AS (
				INSERT INTO findings.finding_counts (org_id, scan_id, severity, state, n, pending)
				SELECT org_id, scan_id, severity, state, sum(n), false FROM gone
				GROUP BY org_id, scan_id, severity, state HAVING sum(n) <> 0
				RETURNING 1
			)
			SELECT (SELECT count(*) FROM gone) - (SELECT count(*) FROM folded)`, keys).Scan(&removed); err != nil {
			return err
		}
		var searchRemoved int64
		err := tx.QueryRow(ctx, `WITH k AS (
				SELECT DISTINCT org_id, repo_key, category, severity, state FROM findings.finding_search_counts WHERE pending LIMIT $1
			), gone AS (
				DELETE FROM findings.finding_search_counts c USING k
				WHERE (c.org_id, c.repo_key, c.category, c.severity, c.state) = (k.org_id, k.repo_key, k.category, k.severity, k.state)
				RETURNING c.org_id, c.repo_key, c.category, c.severity, c.state, c.n
			), folded AS (
				INSERT INTO findings.finding_search_counts (org_id, repo_key, category, severity, state, n, pending)
				SELECT org_id, repo_key, category, severity, state, sum(n), false FROM gone
				GROUP BY org_id, repo_key, category, severity, state HAVING sum(n) <> 0
				RETURNING 1
			)
			SELECT (SELECT count(*) FROM gone) - (SELECT count(*) FROM folded)`, keys).Scan(&searchRemoved)
		removed += searchRemoved
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("fold counts: %w", err)
	}
	return removed, nil
}
