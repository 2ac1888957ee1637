package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"
)

// RegisterScan records a scan; registering it again changes nothing.
func (s *Store) RegisterScan(ctx context.Context, sc Scan) (bool, error) {
	tag, err := s.Pool.Exec(ctx, `INSERT INTO findings.scans (id, org_id, repo_url, repo_key, scan_type, commit_sha, pull_request)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
		sc.ID, sc.OrgID, sc.RepoURL, RepoKey(sc.RepoURL), sc.ScanType, sc.CommitSHA, sc.PullRequest)
	if err != nil {
		return false, fmt.Errorf("insert scan: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	existing, err := s.GetScan(ctx, sc.ID)
	if err != nil {
		return false, err
	}
	if existing.OrgID != sc.OrgID {
		return false, &InvalidError{Msg: "scan_id is registered to another organization"}
	}
	return false, nil
}

// GetScan returns a registered scan.
func (s *Store) GetScan(ctx context.Context, id string) (Scan, error) {
	var sc Scan
	err := s.Pool.QueryRow(ctx, `SELECT id::text, org_id::text, repo_url, scan_type, commit_sha, pull_request, created_at
		FROM findings.scans WHERE id = $1`, id).Scan(&sc.ID, &sc.OrgID, &sc.RepoURL, &sc.ScanType, &sc.CommitSHA, &sc.PullRequest, &sc.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return sc, ErrScanNotFound
	}
	return sc, err
}

// OrgScan returns a scan of the organization, or ErrScanNotFound.
func (s *Store) OrgScan(ctx context.Context, orgID, id string) (Scan, error) {
	sc, err := s.GetScan(ctx, id)
	if err == nil && sc.OrgID != orgID {
		return Scan{}, ErrScanNotFound
	}
	return sc, err
}

// Reported is a finding as a scan reports it.
type Reported struct {
	Fingerprint, Title, Category, Severity, Description string
	AffectedFile, AffectedCode                          string
	ProofOfConcept, MermaidTrace                        *string
	Tags                                                []string
	StartLine, EndLine                                  int32
	Verified                                            bool
}

// ReportResult says what a report did to one finding.
type ReportResult struct {
	Fingerprint, FindingID, VerificationStatus string
	Created, Reopened                          bool
}

// Report records a batch of findings of scan in one transaction. A finding
// new to the repository is created (approved at once when verified and
// autoApprove); one seen before gets an occurrence, and is reopened when it
// was resolved (unless closed as a duplicate). Reporting the same
// (scan, fingerprint) again changes nothing.
func (s *Store) Report(ctx context.Context, sc Scan, batch []Reported, autoApprove bool) ([]ReportResult, error) {
	repoKey := RepoKey(sc.RepoURL)
	out := make([]ReportResult, 0, len(batch))
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		out = out[:0]
		for _, r := range batch {
			res := ReportResult{Fingerprint: r.Fingerprint}
			status := Pending
			if r.Verified && autoApprove {
				status = Approved
			}
			tags := r.Tags
			if tags == nil {
				tags = []string{}
			}
			id := uuid.NewString()
			err := tx.QueryRow(ctx, `INSERT INTO findings.findings (id, org_id, repo_key, fingerprint, scan_id, title, category, severity,
				severity_rank, description, affected_file, affected_code, proof_of_concept, tags, mermaid_trace, start_line, end_line, verification_status)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
				ON CONFLICT (org_id, repo_key, fingerprint) DO NOTHING RETURNING id::text`,
				id, sc.OrgID, repoKey, r.Fingerprint, sc.ID, r.Title, r.Category, r.Severity, SeverityRank(r.Severity),
				r.Description, r.AffectedFile, r.AffectedCode, r.ProofOfConcept, tags, r.MermaidTrace, r.StartLine, r.EndLine, status).Scan(&res.FindingID)
			switch {
			case err == nil:
				res.Created = true
				res.VerificationStatus = status
				if _, err := tx.Exec(ctx, `INSERT INTO findings.occurrences (scan_id, finding_id) VALUES ($1, $2)`, sc.ID, res.FindingID); err != nil {
					return fmt.Errorf("insert occurrence: %w", err)
				}
			case errors.Is(err, pgx.ErrNoRows):
				if err := s.seenAgain(ctx, tx, sc, repoKey, r, autoApprove, &res); err != nil {
					return err
				}
			default:
				return fmt.Errorf("insert finding: %w", err)
			}
			out = append(out, res)
		}
		return nil
	})
	return out, err
}

func (s *Store) seenAgain(ctx context.Context, tx pgx.Tx, sc Scan, repoKey string, r Reported, autoApprove bool, res *ReportResult) error {
	var state, status string
	var dup *string
	err := tx.QueryRow(ctx, `SELECT id::text, state, verification_status, duplicate_of::text FROM findings.findings
		WHERE org_id = $1 AND repo_key = $2 AND fingerprint = $3 FOR UPDATE`, sc.OrgID, repoKey, r.Fingerprint).Scan(&res.FindingID, &state, &status, &dup)
	if err != nil {
		return fmt.Errorf("lock finding: %w", err)
	}
	res.VerificationStatus = status
	tag, err := tx.Exec(ctx, `INSERT INTO findings.occurrences (scan_id, finding_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, sc.ID, res.FindingID)
	if err != nil {
		return fmt.Errorf("insert occurrence: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return nil // this scan already reported it
	}
	if status == Pending && r.Verified && autoApprove {
		res.VerificationStatus = Approved
	}
	reopen := state == "resolved" && dup == nil
	res.Reopened = reopen
	newState := state
	if reopen {
		newState = "open"
	}
	if _, err := tx.Exec(ctx, `UPDATE findings.findings SET occurrence_count = occurrence_count + 1, verification_status = $2, state = $3,
		updated_at = CASE WHEN $3 <> state THEN now() ELSE updated_at END WHERE id = $1`, res.FindingID, res.VerificationStatus, newState); err != nil {
		return fmt.Errorf("update finding: %w", err)
	}
	if !reopen {
		return nil
	}
	reason := "Seen again in scan " + sc.ID
	actor := Actor{UserID: AgentUserID, Username: AgentUsername, Source: "agent"}
	ch := []Change{{Field: "state", From: &state, To: &newState, Reason: reason}}
	return s.recordChange(ctx, tx, sc.OrgID, res.FindingID, actor, ch, &newState, &reason, "finding.reopened")
}

// SetVerification sets a finding's verification status.
func (s *Store) SetVerification(ctx context.Context, id, status string) (string, error) {
	tag, err := s.Pool.Exec(ctx, `UPDATE findings.findings SET verification_status = $2 WHERE id = $1`, id, status)
	if err != nil {
		return "", fmt.Errorf("set verification: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return "", ErrNotFound
	}
	return status, nil
}

// OperatorFinding is a finding with its verification status.
type OperatorFinding struct {
	ID, Title, VerificationStatus, Severity, State, Category, Fingerprint, AffectedFile string
	FoundAt                                                                             time.Time
}

// ListForOperator lists the findings that occurred in a scan, approved only
// unless includeUnverified.
func (s *Store) ListForOperator(ctx context.Context, scanID string, includeUnverified bool) ([]OperatorFinding, error) {
	rows, err := s.Pool.Query(ctx, `SELECT f.id::text, f.title, f.verification_status, f.severity, f.state, f.category, f.fingerprint, f.affected_file, f.found_at
		FROM findings.occurrences o JOIN findings.findings f ON f.id = o.finding_id
		WHERE o.scan_id = $1 AND ($2 OR f.verification_status = 'approved')
		ORDER BY f.severity_rank DESC, f.found_at, f.id`, scanID, includeUnverified)
	if err != nil {
		return nil, fmt.Errorf("list for operator: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OperatorFinding, error) {
		var f OperatorFinding
		err := r.Scan(&f.ID, &f.Title, &f.VerificationStatus, &f.Severity, &f.State, &f.Category, &f.Fingerprint, &f.AffectedFile, &f.FoundAt)
		return f, err
	})
}

// Summaries counts the approved findings of each scan by severity:
// scan id → severity → count.
func (s *Store) Summaries(ctx context.Context, orgID string, scanIDs []string) (map[string]map[string]int64, error) {
	rows, err := s.Pool.Query(ctx, `SELECT scan_id::text, severity, sum(n)::bigint FROM findings.finding_counts
		WHERE org_id = $1 AND scan_id = ANY($2::uuid[]) GROUP BY scan_id, severity`, orgID, scanIDs)
	if err != nil {
		return nil, fmt.Errorf("summaries: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]int64{}
	for rows.Next() {
		var scan, sev string
		var n int64
		if err := rows.Scan(&scan, &sev, &n); err != nil {
			return nil, err
		}
		if out[scan] == nil {
			out[scan] = map[string]int64{}
		}
		out[scan][sev] = n
	}
	return out, rows.Err()
}
