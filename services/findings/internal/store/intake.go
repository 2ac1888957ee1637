package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// repoKey is the repository identity findings are keyed by.
func (sc Scan) repoKey() string {
	if sc.Key != "" {
		return sc.Key
	}
	return vocab.RepoKey(sc.RepoURL)
}

// RegisterScan records a scan; registering it again changes nothing.
func (s *Store) RegisterScan(ctx context.Context, sc Scan) (bool, error) {
	tag, err := s.Pool.Exec(ctx, `INSERT INTO findings.scans (id, org_id, repo_url, repo_key, scan_type, commit_sha, pull_request)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
		sc.ID, sc.OrgID, sc.RepoURL, sc.repoKey(), sc.ScanType, sc.CommitSHA, sc.PullRequest)
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
	err := s.Pool.QueryRow(ctx, `SELECT id::text, org_id::text, repo_url, repo_key, scan_type, commit_sha, pull_request, created_at
		FROM findings.scans WHERE id = $1`, id).Scan(&sc.ID, &sc.OrgID, &sc.RepoURL, &sc.Key, &sc.ScanType, &sc.CommitSHA, &sc.PullRequest, &sc.CreatedAt)
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
	// visible is set when this report made the finding visible (approved):
	// a finding.created event for the webhooks.
	visible bool
}

// Report records a batch of findings of scan in one transaction. A finding
// new to the repository is created (approved at once when verified and
// autoApprove); one seen before gets an occurrence, and is reopened when it
// was resolved (unless closed as a duplicate). Reporting the same
// (scan, fingerprint) again changes nothing; a fingerprint repeated within
// the batch counts once, as its first entry says. Results are in batch
// order.
//
// The writes are set-based (one statement per table, whatever the batch
// size) and cannot deadlock with each other or with triage: every lock a
// report takes on findings is taken in one order, by fingerprint (byte
// order), first by inserting the new findings and then by locking the
// existing ones, and the counters take no row locks at all (see migration
// 0003). Two reports of one repository therefore queue on their first
// common fingerprint instead of crossing.
func (s *Store) Report(ctx context.Context, sc Scan, batch []Reported, autoApprove bool) ([]ReportResult, error) {
	uniq, firstOf := dedupe(batch)
	repoKey := sc.repoKey()
	var byFP map[string]*ReportResult
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		if byFP, err = s.report(ctx, tx, sc, repoKey, uniq, autoApprove); err != nil {
			return err
		}
		var visible []string
		for _, r := range uniq {
			if res := byFP[r.Fingerprint]; res.visible {
				visible = append(visible, res.FindingID)
			}
		}
		return emitCreated(ctx, tx, sc.OrgID, visible)
	})
	if err != nil {
		return nil, err
	}
	out := make([]ReportResult, len(batch))
	for i, r := range batch {
		res := *byFP[r.Fingerprint]
		if firstOf[r.Fingerprint] != i { // a repeat: the first entry did the work
			res.Created, res.Reopened = false, false
		}
		out[i] = res
	}
	return out, nil
}

// dedupe returns the batch's distinct fingerprints' first entries sorted by
// fingerprint in byte order, and the index of each fingerprint's first entry.
func dedupe(batch []Reported) ([]Reported, map[string]int) {
	firstOf := make(map[string]int, len(batch))
	uniq := make([]Reported, 0, len(batch))
	for i, r := range batch {
		if _, ok := firstOf[r.Fingerprint]; ok {
			continue
		}
		firstOf[r.Fingerprint] = i
		uniq = append(uniq, r)
	}
	slices.SortFunc(uniq, func(a, b Reported) int { return strings.Compare(a.Fingerprint, b.Fingerprint) })
	return uniq, firstOf
}

// newFinding is one row of the insert, as JSON for jsonb_to_recordset.
type newFinding struct {
	ID             string   `json:"id"`
	Fingerprint    string   `json:"fingerprint"`
	Title          string   `json:"title"`
	Category       string   `json:"category"`
	Severity       string   `json:"severity"`
	SeverityRank   int      `json:"severity_rank"`
	Description    string   `json:"description"`
	AffectedFile   string   `json:"affected_file"`
	AffectedCode   string   `json:"affected_code"`
	ProofOfConcept *string  `json:"proof_of_concept"`
	Tags           []string `json:"tags"`
	MermaidTrace   *string  `json:"mermaid_trace"`
	StartLine      int32    `json:"start_line"`
	EndLine        int32    `json:"end_line"`
	Status         string   `json:"verification_status"`
	Ord            int      `json:"ord"`
}

// report does Report's work for the sorted distinct findings uniq and
// returns the result of each fingerprint.
func (s *Store) report(ctx context.Context, tx pgx.Tx, sc Scan, repoKey string, uniq []Reported, autoApprove bool) (map[string]*ReportResult, error) {
	byFP := make(map[string]*ReportResult, len(uniq))
	if len(uniq) == 0 {
		return byFP, nil
	}
	rows := make([]newFinding, len(uniq))
	fps := make([]string, len(uniq))
	for i, r := range uniq {
		status := Pending
		if r.Verified && autoApprove {
			status = Approved
		}
		tags := r.Tags
		if tags == nil {
			tags = []string{}
		}
		rows[i] = newFinding{ID: uuid.NewString(), Fingerprint: r.Fingerprint, Title: r.Title, Category: r.Category, Severity: r.Severity,
			SeverityRank: SeverityRank(r.Severity), Description: r.Description, AffectedFile: r.AffectedFile, AffectedCode: r.AffectedCode,
			ProofOfConcept: r.ProofOfConcept, Tags: tags, MermaidTrace: r.MermaidTrace, StartLine: r.StartLine, EndLine: r.EndLine,
			Status: status, Ord: i}
		fps[i] = r.Fingerprint
		byFP[r.Fingerprint] = &ReportResult{Fingerprint: r.Fingerprint}
	}
	payload, err := json.Marshal(rows)
	if err != nil {
		return nil, fmt.Errorf("encode findings: %w", err)
	}

	// 1. The new findings, inserted in fingerprint order. A fingerprint
	// another transaction is inserting waits for it here, in that order.
	ins, err := tx.Query(ctx, `INSERT INTO findings.findings (id, org_id, repo_key, fingerprint, scan_id, title, category, severity,
			severity_rank, description, affected_file, affected_code, proof_of_concept, tags, mermaid_trace, start_line, end_line, verification_status)
		SELECT r.id, $1, $2, r.fingerprint, $3, r.title, r.category, r.severity, r.severity_rank, r.description, r.affected_file,
			r.affected_code, r.proof_of_concept, r.tags, r.mermaid_trace, r.start_line, r.end_line, r.verification_status
		FROM jsonb_to_recordset($4::jsonb) AS r(id uuid, fingerprint text, title text, category text, severity text, severity_rank smallint,
			description text, affected_file text, affected_code text, proof_of_concept text, tags text[], mermaid_trace text,
			start_line integer, end_line integer, verification_status text, ord integer)
		ORDER BY r.ord
		ON CONFLICT (org_id, repo_key, fingerprint) DO NOTHING RETURNING fingerprint`, sc.OrgID, repoKey, sc.ID, payload)
	if err != nil {
		return nil, fmt.Errorf("insert findings: %w", err)
	}
	created, err := pgx.CollectRows(ins, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("insert findings: %w", err)
	}
	isNew := make(map[string]bool, len(created))
	for _, fp := range created {
		isNew[fp] = true
	}
	for _, row := range rows {
		if isNew[row.Fingerprint] {
			res := byFP[row.Fingerprint]
			res.FindingID, res.VerificationStatus, res.Created = row.ID, row.Status, true
			res.visible = row.Status == Approved
		}
	}

	// 2. The findings seen before, locked in fingerprint order.
	type seen struct {
		id, fp, state, status string
		dup                   *string
		verified              bool
	}
	var old []seen
	if len(created) < len(uniq) {
		var oldFPs []string
		verified := map[string]bool{}
		for _, r := range uniq {
			if !isNew[r.Fingerprint] {
				oldFPs = append(oldFPs, r.Fingerprint)
				verified[r.Fingerprint] = r.Verified
			}
		}
		lk, err := tx.Query(ctx, `SELECT id::text, fingerprint, state, verification_status, duplicate_of::text FROM findings.findings
			WHERE org_id = $1 AND repo_key = $2 AND fingerprint = ANY($3)
			ORDER BY fingerprint COLLATE "C" FOR NO KEY UPDATE`, sc.OrgID, repoKey, oldFPs)
		if err != nil {
			return nil, fmt.Errorf("lock findings: %w", err)
		}
		old, err = pgx.CollectRows(lk, func(r pgx.CollectableRow) (seen, error) {
			var x seen
			err := r.Scan(&x.id, &x.fp, &x.state, &x.status, &x.dup)
			x.verified = verified[x.fp]
			return x, err
		})
		if err != nil {
			return nil, fmt.Errorf("lock findings: %w", err)
		}
		if len(old) != len(oldFPs) {
			return nil, fmt.Errorf("lock findings: %d of %d findings seen before are missing", len(oldFPs)-len(old), len(oldFPs))
		}
		for _, x := range old {
			res := byFP[x.fp]
			res.FindingID, res.VerificationStatus = x.id, x.status
		}
	}

	// 3. One occurrence per finding for this scan; for a finding seen
	// before, a new occurrence is what makes this report count.
	ids := make([]string, len(uniq))
	for i, r := range uniq {
		ids[i] = byFP[r.Fingerprint].FindingID
	}
	occ, err := tx.Query(ctx, `INSERT INTO findings.occurrences (scan_id, finding_id)
		SELECT $1, u.id FROM unnest($2::uuid[]) WITH ORDINALITY AS u(id, ord) ORDER BY u.ord
		ON CONFLICT DO NOTHING RETURNING finding_id::text`, sc.ID, ids)
	if err != nil {
		return nil, fmt.Errorf("insert occurrences: %w", err)
	}
	inserted, err := pgx.CollectRows(occ, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("insert occurrences: %w", err)
	}
	newOcc := make(map[string]bool, len(inserted))
	for _, id := range inserted {
		newOcc[id] = true
	}

	// 4. Findings seen again by this scan: one more occurrence, approved
	// when verified, reopened when resolved (but not as a duplicate).
	var upIDs, upStatus, upState []string
	var reopened []string
	for _, x := range old {
		if !newOcc[x.id] {
			continue // this scan already reported it
		}
		res := byFP[x.fp]
		if x.status == Pending && x.verified && autoApprove {
			res.VerificationStatus, res.visible = Approved, true
		}
		state := x.state
		if x.state == "resolved" && x.dup == nil {
			res.Reopened, state = true, "open"
			reopened = append(reopened, x.id)
		}
		upIDs, upStatus, upState = append(upIDs, x.id), append(upStatus, res.VerificationStatus), append(upState, state)
	}
	if len(upIDs) == 0 {
		return byFP, nil
	}
	if _, err := tx.Exec(ctx, `UPDATE findings.findings f SET occurrence_count = f.occurrence_count + 1, verification_status = u.status,
			state = u.state, updated_at = CASE WHEN u.state <> f.state THEN now() ELSE f.updated_at END
		FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(id, status, state) WHERE f.id = u.id`, upIDs, upStatus, upState); err != nil {
		return nil, fmt.Errorf("update findings: %w", err)
	}
	if len(reopened) > 0 {
		if err := recordReopened(ctx, tx, sc, reopened); err != nil {
			return nil, err
		}
	}
	return byFP, nil
}

// recordReopened writes, for findings that scan reopened, what a triage
// change writes: an audit record of the state change, a thread entry, and
// the integrations' events, each as one statement for all of them.
func recordReopened(ctx context.Context, tx pgx.Tx, sc Scan, ids []string) error {
	reason := "Seen again in scan " + sc.ID
	from, to := "resolved", "open"
	actor := Actor{UserID: AgentUserID, Username: AgentUsername, Source: "agent"}
	if _, err := tx.Exec(ctx, `INSERT INTO findings.audit_log (finding_id, org_id, field, from_value, to_value, reason, actor_user_id, source)
		SELECT u.id, $2, 'state', $3, $4, $5, $6, $7 FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, ord) ORDER BY u.ord`,
		ids, sc.OrgID, from, to, reason, actor.UserID, actor.Source); err != nil {
		return fmt.Errorf("insert audit records: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO findings.triage_entries (id, finding_id, reaction, comment, user_id, username, source)
		SELECT gen_random_uuid(), u.id, $2, $3, $4, $5, $6 FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, ord) ORDER BY u.ord`,
		ids, to, reason, actor.UserID, actor.Username, actor.Source); err != nil {
		return fmt.Errorf("insert triage entries: %w", err)
	}
	changes := []Change{{Field: "state", From: &from, To: &to, Reason: reason}}
	if err := emitUpdated(ctx, tx, sc.OrgID, ids, func(string) []Change { return changes }, reason, actor); err != nil {
		return err
	}
	return enqueueMany(ctx, tx, sc.OrgID, ids, "finding.reopened", actor, changes, reason)
}

// SetVerification sets a finding's verification status.
// A pending finding it approves becomes visible: a finding.created event.
func (s *Store) SetVerification(ctx context.Context, id, status string) (string, error) {
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var orgID, before string
		err := tx.QueryRow(ctx, `SELECT org_id::text, verification_status FROM findings.findings WHERE id = $1 FOR UPDATE`, id).Scan(&orgID, &before)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("set verification: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE findings.findings SET verification_status = $2 WHERE id = $1`, id, status); err != nil {
			return fmt.Errorf("set verification: %w", err)
		}
		if before != Approved && status == Approved {
			return emitCreated(ctx, tx, orgID, []string{id})
		}
		return nil
	})
	if err != nil {
		return "", err
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
