package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"
)

// foldLockKey is the advisory lock that lets one FoldCounts run at a time
// across replicas: two folds deleting overlapping delta rows in different
// orders could otherwise deadlock each other.
const foldLockKey = 0x66696e64636e74 // "findcnt"

// counterTables are the delta counter tables with their key columns.
var counterTables = []struct{ table, key string }{
	{"finding_counts", "org_id, scan_id, severity, state"},
	{"finding_search_counts", "org_id, repo_key, category, severity, state"},
	{"finding_hour_counts", "org_id, hour, severity, state"},
	{"finding_tag_counts", "org_id, tag, severity_rank, state"},
	{"finding_scan_tag_counts", "org_id, scan_id, tag, severity_rank, state"},
	{"finding_tag_search_counts", "org_id, tag, repo_key, category, severity_rank, state"},
	{"finding_key_counts", "org_id, field, key, severity, state"},
	{"finding_key_search_counts", "org_id, field, key, repo_key, category, severity, state"},
	{"finding_scan_key_counts", "scan_id, field, key, severity_rank, state"},
	{"search_text_counts", "org_id, field"},
}

// foldSQL renders the fold of up to $1 pending keys of a counter table,
// returning how many rows it removed.
func foldSQL(table, key string) string {
	ck := "c." + strings.ReplaceAll(key, ", ", ", c.")
	kk := "k." + strings.ReplaceAll(key, ", ", ", k.")
	return `WITH k AS (
			SELECT DISTINCT ` + key + ` FROM findings.` + table + ` WHERE pending LIMIT $1
		), gone AS (
			DELETE FROM findings.` + table + ` c USING k
			WHERE (` + ck + `) = (` + kk + `)
			RETURNING ` + ck + `, c.n
		), folded AS (
			INSERT INTO findings.` + table + ` (` + key + `, n, pending)
			SELECT ` + key + `, sum(n), false FROM gone
			GROUP BY ` + key + ` HAVING sum(n) <> 0
			RETURNING 1
		)
		SELECT (SELECT count(*) FROM gone) - (SELECT count(*) FROM folded)`
}

// FoldCounts replaces, in each counter table (finding_counts,
// finding_search_counts, finding_hour_counts, finding_tag_counts,
// finding_scan_tag_counts, finding_tag_search_counts, finding_key_counts,
// finding_key_search_counts, finding_scan_key_counts, search_text_counts),
// all rows of up to keys
// counter keys that have pending deltas by a single settled row holding
// their sum (none when the sum is zero), and returns how many rows it removed. A key's rows are deleted and
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
		for _, c := range counterTables {
			var n int64
			if err := tx.QueryRow(ctx, foldSQL(c.table, c.key), keys).Scan(&n); err != nil {
				return fmt.Errorf("%s: %w", c.table, err)
			}
			removed += n
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("fold counts: %w", err)
	}
	return removed, nil
}
