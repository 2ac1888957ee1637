package store

import (
	"context"
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
	release, err := s.Intake.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	err = db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
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

// report does Report's work for the sorted distinct findings uniq and
// returns the result of each fingerprint.
func (s *Store) report(ctx context.Context, tx pgx.Tx, sc Scan, repoKey string, uniq []Reported, autoApprove bool) (map[string]*ReportResult, error) {
	byFP := make(map[string]*ReportResult, len(uniq))
	if len(uniq) == 0 {
		return byFP, nil
	}
	n := len(uniq)
	size := func(f func(r Reported) int) int {
		t := 0
		for _, r := range uniq {
			t += f(r) + 3
		}
		return t + t/16
	}
	ids, statuses := make([]string, n), make([]string, n)
	idCol, statusCol := db.NewArrayLiteral(n*39), db.NewArrayLiteral(n*11)
	fpCol := db.NewArrayLiteral(size(func(r Reported) int { return len(r.Fingerprint) }))
	titleCol := db.NewArrayLiteral(size(func(r Reported) int { return len(r.Title) }))
	categoryCol := db.NewArrayLiteral(size(func(r Reported) int { return len(r.Category) }))
	severityCol, rankCol := db.NewArrayLiteral(n*11), db.NewArrayLiteral(n*2)
	descCol := db.NewArrayLiteral(size(func(r Reported) int { return len(r.Description) }))
	fileCol := db.NewArrayLiteral(size(func(r Reported) int { return len(r.AffectedFile) }))
	codeCol := db.NewArrayLiteral(size(func(r Reported) int { return len(r.AffectedCode) }))
	pocCol := db.NewArrayLiteral(size(func(r Reported) int { return len(deref(r.ProofOfConcept)) + 2 }))
	traceCol := db.NewArrayLiteral(size(func(r Reported) int { return len(deref(r.MermaidTrace)) + 2 }))
	tagsCol := db.NewArrayLiteral(size(func(r Reported) int {
		n := 0
		for _, t := range r.Tags {
			n += len(t) + 3
		}
		return 2 * n
	}))
	startCol, endCol := db.NewArrayLiteral(n*6), db.NewArrayLiteral(n*6)
	for i, r := range uniq {
		statuses[i] = Pending
		if r.Verified && autoApprove {
			statuses[i] = Approved
		}
		ids[i] = newFindingID()
		tags := db.NewArrayLiteral(len(r.Tags) * 16)
		for _, t := range r.Tags {
			tags.Str(t)
		}
		idCol.Str(ids[i])
		statusCol.Str(statuses[i])
		fpCol.Str(r.Fingerprint)
		titleCol.Str(r.Title)
		categoryCol.Str(r.Category)
		severityCol.Str(r.Severity)
		rankCol.Int(int64(SeverityRank(r.Severity)))
		descCol.Str(r.Description)
		fileCol.Str(r.AffectedFile)
		codeCol.Str(r.AffectedCode)
		pocCol.Opt(r.ProofOfConcept)
		traceCol.Opt(r.MermaidTrace)
		tagsCol.Str(tags.String())
		startCol.Int(int64(r.StartLine))
		endCol.Int(int64(r.EndLine))
		byFP[r.Fingerprint] = &ReportResult{Fingerprint: r.Fingerprint}
	}

	// 1. The new findings, inserted in fingerprint order. A fingerprint
	// another transaction is inserting waits for it here, in that order.
	ins, err := tx.Query(ctx, `INSERT INTO findings.findings (id, org_id, repo_key, fingerprint, scan_id, title, category, severity,
			severity_rank, description, affected_file, affected_code, proof_of_concept, tags, mermaid_trace, start_line, end_line, verification_status)
		SELECT r.id, $1, $2, r.fingerprint, $3, r.title, r.category, r.severity, r.severity_rank, r.description, r.affected_file,
			r.affected_code, r.proof_of_concept, r.tags::text[], r.mermaid_trace, r.start_line, r.end_line, r.verification_status
		FROM unnest($4::text::uuid[], $5::text::text[], $6::text::text[], $7::text::text[], $8::text::text[], $9::text::smallint[],
			$10::text::text[], $11::text::text[], $12::text::text[], $13::text::text[], $14::text::text[], $15::text::text[],
			$16::text::integer[], $17::text::integer[], $18::text::text[]) WITH ORDINALITY
			AS r(id, fingerprint, title, category, severity, severity_rank, description, affected_file, affected_code, proof_of_concept,
			tags, mermaid_trace, start_line, end_line, verification_status, ord)
		ORDER BY r.ord
		ON CONFLICT (org_id, repo_key, fingerprint) DO NOTHING RETURNING fingerprint`, sc.OrgID, repoKey, sc.ID,
		idCol.String(), fpCol.String(), titleCol.String(), categoryCol.String(), severityCol.String(), rankCol.String(), descCol.String(),
		fileCol.String(), codeCol.String(), pocCol.String(), tagsCol.String(), traceCol.String(), startCol.String(), endCol.String(),
		statusCol.String())
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
	for i, r := range uniq {
		if isNew[r.Fingerprint] {
			res := byFP[r.Fingerprint]
			res.FindingID, res.VerificationStatus, res.Created = ids[i], statuses[i], true
			res.visible = statuses[i] == Approved
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
		lk, err := tx.Query(ctx, lockSeenSQL, sc.OrgID, repoKey, oldFPs)
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
	findingCol := db.NewArrayLiteral(len(uniq) * 39)
	for _, r := range uniq {
		findingCol.Str(byFP[r.Fingerprint].FindingID)
	}
	occ, err := tx.Query(ctx, `INSERT INTO findings.occurrences (scan_id, finding_id)
		SELECT $1, u.id FROM unnest($2::text::uuid[]) WITH ORDINALITY AS u(id, ord) ORDER BY u.ord
		ON CONFLICT DO NOTHING RETURNING finding_id::text`, sc.ID, findingCol.String())
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
		if x.state == string(vocab.Resolved) && x.dup == nil {
			res.Reopened, state = true, string(vocab.Open)
			reopened = append(reopened, x.id)
		}
		upIDs, upStatus, upState = append(upIDs, x.id), append(upStatus, res.VerificationStatus), append(upState, state)
	}
	if len(upIDs) == 0 {
		return byFP, nil
	}
	if _, err := tx.Exec(ctx, `UPDATE findings.findings f SET occurrence_count = f.occurrence_count + 1, verification_status = u.status,
			state = u.state, updated_at = CASE WHEN u.state <> f.state THEN now() ELSE f.updated_at END
		FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(id, status, state) WHERE f.id = u.id`, db.UUIDArray(upIDs), upStatus, upState); err != nil {
		return nil, fmt.Errorf("update findings: %w", err)
	}
	if len(reopened) > 0 {
		if err := recordReopened(ctx, tx, sc, reopened); err != nil {
			return nil, err
		}
	}
	return byFP, nil
}

// lockSeenSQL locks and reads the findings of a repository ($1, $2) with
// the fingerprints $3, which are sorted in byte order.
//
// Each fingerprint is looked up on its own, through the whole unique key
// (org_id, repo_key, fingerprint): the subquery's lock keeps the planner
// from merging it into a join. The plain form, fingerprint = ANY($3) beside
// the organization and repository, lets the planner take the array as a
// filter over every finding of the repository instead, as its generic plan
// does whenever it expects a repository to hold few findings (a new table,
// or many small repositories beside one large one): then every report to a
// large repository read all of that repository's findings. The nested loop
// takes the locks in the array's order, which is the order every report of
// the repository locks in, so that two reports queue rather than deadlock.
const lockSeenSQL = `SELECT f.id::text, f.fingerprint, f.state, f.verification_status, f.duplicate_of::text
	FROM unnest($3::text[]) WITH ORDINALITY AS u(fingerprint, ord)
	CROSS JOIN LATERAL (SELECT id, fingerprint, state, verification_status, duplicate_of FROM findings.findings
		WHERE org_id = $1 AND repo_key = $2 AND fingerprint = u.fingerprint FOR NO KEY UPDATE) f
	ORDER BY u.ord`

// recordReopened writes, for findings that scan reopened, what a triage
// change writes: an audit record of the state change, a thread entry, and
// the integrations' events, each as one statement for all of them.
func recordReopened(ctx context.Context, tx pgx.Tx, sc Scan, ids []string) error {
	reason := "Seen again in scan " + sc.ID
	from, to := string(vocab.Resolved), string(vocab.Open)
	actor := Actor{UserID: AgentUserID, Username: AgentUsername, Source: "agent"}
	if _, err := tx.Exec(ctx, `INSERT INTO findings.audit_log (finding_id, org_id, field, from_value, to_value, reason, actor_user_id, source)
		SELECT u.id, $2, 'state', $3, $4, $5, $6, $7 FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, ord) ORDER BY u.ord`,
		db.UUIDArray(ids), sc.OrgID, from, to, reason, actor.UserID, actor.Source); err != nil {
		return fmt.Errorf("insert audit records: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO findings.triage_entries (id, finding_id, reaction, comment, user_id, username, source)
		SELECT gen_random_uuid(), u.id, $2, $3, $4, $5, $6 FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, ord) ORDER BY u.ord`,
		db.UUIDArray(ids), to, reason, actor.UserID, actor.Username, actor.Source); err != nil {
		return fmt.Errorf("insert triage entries: %w", err)
	}
	changes := []Change{{Field: "state", From: &from, To: &to, Reason: reason}}
	if err := emitUpdated(ctx, tx, sc.OrgID, ids, func(string) []Change { return changes }, reason, actor); err != nil {
		return err
	}
	return enqueueMany(ctx, tx, sc.OrgID, ids, "finding.reopened", actor, changes, reason)
}

// newFindingID returns a time-ordered (version 7) UUID for a new finding.
//
// A finding's id is the last key of the primary key and of every index and
// table that refers to a finding (occurrences, tags, the list indexes'
// tie-breaker). Random ids scatter each batch's inserts over the leaf pages
// of those indexes, so that at a million findings nearly every insert
// dirties a page of its own and, after each checkpoint, writes a full page
// image: a batch of 100 new findings wrote about 2.7 MB of WAL with random
// ids and about 0.95 MB with time-ordered ones. Time-ordered ids append at
// the right edge instead. They carry their creation time to the millisecond,
// which a finding's found_at already tells, and 74 random bits: ids are
// names, not secrets, since every read is authorized by organization.
func newFindingID() string {
	id, err := uuid.NewV7()
	if err != nil {
		// NewV7 fails only when the system's random source does; so would
		// NewString, which panics.
		panic(fmt.Sprintf("finding id: %v", err))
	}
	return id.String()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// SetVerification sets a finding's verification status.
// A pending finding it approves becomes visible: a finding.created event.
func (s *Store) SetVerification(ctx context.Context, id, status string) (string, error) {
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var orgID, before string
		err := tx.QueryRow(ctx, `SELECT org_id::text, verification_status FROM findings.findings WHERE id = $1 FOR NO KEY UPDATE`, id).Scan(&orgID, &before)
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
		WHERE org_id = $1 AND scan_id = ANY($2::uuid[]) GROUP BY scan_id, severity`, orgID, db.UUIDArray(scanIDs))
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
