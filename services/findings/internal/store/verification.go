package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"
)

// The scan worker reports a finding's confidence as the tag
// "confidence:<level>" and its reasons as the last paragraph of the
// description: "Why we report this (confidence: <level>):" followed by one
// "- reason" line each. The operators' list reads them back from there.
const (
	confidenceTag = "confidence:"
	whyHeading    = "\n\nWhy we report this (confidence: "
)

// Confidence returns the confidence a finding was reported with and the
// reasons behind it, read from its tags and description ("" and nil when
// the report carried none).
func Confidence(tags []string, description string) (string, []string) {
	level := ""
	for _, t := range tags {
		if v, ok := strings.CutPrefix(t, confidenceTag); ok {
			level = v
		}
	}
	i := strings.LastIndex("\n\n"+description, whyHeading)
	if i < 0 {
		return level, nil
	}
	rest := ("\n\n" + description)[i+len(whyHeading):]
	head, body, _ := strings.Cut(rest, "\n")
	if level == "" {
		level = strings.TrimSuffix(head, "):")
	}
	var reasons []string
	for _, l := range strings.Split(body, "\n") {
		if r, ok := strings.CutPrefix(l, "- "); ok && strings.TrimSpace(r) != "" {
			reasons = append(reasons, strings.TrimSpace(r))
		}
	}
	return level, reasons
}

// OperatorQuery selects the findings an operator lists: those that occurred
// in ScanID, or all of OrgID's; in Status only when it is set, approved
// only unless IncludeUnverified.
type OperatorQuery struct {
	ScanID, OrgID     string
	Status            string
	IncludeUnverified bool
}

// OperatorEntry is a finding as operators review it: its verification
// status with the confidence and reasons it was reported with.
type OperatorEntry struct {
	OperatorFinding
	StartLine  int32
	Confidence string
	Reasons    []string
}

// ListForReview lists findings for operators, most severe first.
func (s *Store) ListForReview(ctx context.Context, q OperatorQuery) ([]OperatorEntry, error) {
	statuses := []string{Approved}
	switch {
	case q.Status != "":
		statuses = []string{q.Status}
	case q.IncludeUnverified:
		statuses = []string{Approved, Pending, Rejected}
	}
	const cols = `f.id::text, f.title, f.verification_status, f.severity, f.state, f.category, f.fingerprint, f.affected_file, f.found_at,
		f.start_line, f.tags, f.description`
	var rows pgx.Rows
	var err error
	if q.ScanID != "" {
		rows, err = s.Pool.Query(ctx, `SELECT `+cols+`
			FROM findings.occurrences o JOIN findings.findings f ON f.id = o.finding_id
			WHERE o.scan_id = $1 AND f.verification_status = ANY($2)
			ORDER BY f.severity_rank DESC, f.found_at, f.id`, q.ScanID, statuses)
	} else {
		rows, err = s.Pool.Query(ctx, `SELECT `+cols+` FROM findings.findings f
			WHERE f.org_id = $1 AND f.verification_status = ANY($2)
			ORDER BY f.severity_rank DESC, f.found_at, f.id LIMIT 10000`, q.OrgID, statuses)
	}
	if err != nil {
		return nil, fmt.Errorf("list for review: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OperatorEntry, error) {
		var e OperatorEntry
		var tags []string
		var desc string
		var found time.Time
		err := r.Scan(&e.ID, &e.Title, &e.VerificationStatus, &e.Severity, &e.State, &e.Category, &e.Fingerprint, &e.AffectedFile, &found,
			&e.StartLine, &tags, &desc)
		e.FoundAt = found
		e.Confidence, e.Reasons = Confidence(tags, desc)
		return e, err
	})
}

// VerificationCounts counts the findings that occurred in each scan by
// verification status: scan id → status → count.
func (s *Store) VerificationCounts(ctx context.Context, orgID string, scanIDs []string) (map[string]map[string]int64, error) {
	rows, err := s.Pool.Query(ctx, verificationCountsSQL, orgID, db.UUIDArray(scanIDs))
	if err != nil {
		return nil, fmt.Errorf("verification counts: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]int64{}
	for rows.Next() {
		var scan, status string
		var n int64
		if err := rows.Scan(&scan, &status, &n); err != nil {
			return nil, err
		}
		if out[scan] == nil {
			out[scan] = map[string]int64{}
		}
		out[scan][status] = n
	}
	return out, rows.Err()
}

// verificationCountsSQL counts the findings of the scans $2 of the
// organization $1 by verification status.
//
// A scan's approved findings are counted by the counters its lists'
// totals read (finding_counts), and only its other findings, which the
// occurrences' partial index on approval finds (migration 0029), are
// looked up one by one. Joining every occurrence of the scans to its
// finding instead let the planner hash the whole organization's findings,
// as its generic plan does: a scan's summary, which a client polls while
// the scan runs, read every finding of a large organization (about 0.3 s
// at 200,000 findings), and even the nested loop read one finding per
// occurrence of the scan.
const verificationCountsSQL = `SELECT scan_id::text, 'approved', sum(n)::bigint FROM findings.finding_counts
	WHERE org_id = $1 AND scan_id = ANY($2::uuid[]) GROUP BY scan_id HAVING sum(n) <> 0
	UNION ALL
	SELECT o.scan_id::text, f.verification_status, count(*) FROM findings.occurrences o
	CROSS JOIN LATERAL (SELECT verification_status FROM findings.findings
		WHERE id = o.finding_id AND org_id = $1 OFFSET 0) f
	WHERE o.scan_id = ANY($2::uuid[]) AND NOT o.approved
	GROUP BY 1, 2`
