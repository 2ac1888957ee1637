package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// Events of a pull request (PR) scan, delivered to git hosting integrations
// only: one review comment per new finding on its line, and one summary.
const (
	EventReviewComment = "scan.review_comment"
	EventReviewSummary = "scan.review_summary"
)

// GitHostingKind is the integration kind of the git host.
const GitHostingKind = "github"

// ReviewSummary is the payload of a PR scan's summary event.
type ReviewSummary struct {
	Event      string         `json:"event"`
	OccurredAt time.Time      `json:"occurred_at"`
	Scan       EventScan      `json:"scan"`
	Counts     map[string]int `json:"counts"`
	Findings   []EventFinding `json:"findings"`
}

// CompleteScan records that scan reported all its findings. The first call
// for a PR scan queues, in the same transaction, one EventReviewComment per
// approved finding the scan reported and one EventReviewSummary, for each
// active git hosting integration of the organization; later calls change
// nothing (a retried scan attempt queues nothing twice). It returns how
// many events it queued; ErrScanNotFound when the scan is not registered for org.
//
// A finding that already got a review comment on the same pull request
// (from an earlier scan of it, e.g. before a new push) gets none again; it
// is still listed in the summary.
func (s *Store) CompleteScan(ctx context.Context, orgID, scanID string) (int, error) {
	queued := 0
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var sc EventScan
		err := tx.QueryRow(ctx, `UPDATE findings.scans SET completed_at = now()
			WHERE id = $1 AND org_id = $2 AND completed_at IS NULL
			RETURNING id::text, repo_url, scan_type, commit_sha, pull_request`, scanID, orgID).
			Scan(&sc.ID, &sc.RepoURL, &sc.ScanType, &sc.CommitSHA, &sc.PullRequest)
		if errors.Is(err, pgx.ErrNoRows) {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM findings.scans WHERE id = $1 AND org_id = $2)`, scanID, orgID).Scan(&exists); err != nil {
				return fmt.Errorf("read scan: %w", err)
			}
			if !exists {
				return ErrScanNotFound
			}
			return nil // completed before
		}
		if err != nil {
			return fmt.Errorf("complete scan: %w", err)
		}
		if sc.ScanType != "pr" {
			return nil
		}
		var integ []string
		rows, err := tx.Query(ctx, `SELECT id::text FROM findings.integrations WHERE org_id = $1 AND kind = $2 AND removed_at IS NULL ORDER BY id`,
			orgID, GitHostingKind)
		if err != nil {
			return fmt.Errorf("git hosting integrations: %w", err)
		}
		if integ, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return fmt.Errorf("git hosting integrations: %w", err)
		}
		if len(integ) == 0 {
			return nil
		}
		rows, err = tx.Query(ctx, `SELECT f.id::text, f.title, f.category, f.severity, f.state, f.affected_file, f.start_line, f.duplicate_of::text
			FROM findings.occurrences o JOIN findings.findings f ON f.id = o.finding_id
			WHERE o.scan_id = $1 AND f.verification_status = 'approved'
			ORDER BY f.severity_rank DESC, f.affected_file, f.start_line, f.id`, scanID)
		if err != nil {
			return fmt.Errorf("scan findings: %w", err)
		}
		fs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (EventFinding, error) {
			var f EventFinding
			err := r.Scan(&f.ID, &f.Title, &f.Category, &f.Severity, &f.State, &f.AffectedFile, &f.StartLine, &f.DuplicateOf)
			return f, err
		})
		if err != nil {
			return fmt.Errorf("scan findings: %w", err)
		}
		now := time.Now().UTC()
		sum := ReviewSummary{Event: EventReviewSummary, OccurredAt: now, Scan: sc, Findings: fs,
			Counts: map[string]int{}}
		for _, sev := range vocab.Severities.Strings() {
			sum.Counts[sev] = 0
		}
		if sum.Findings == nil {
			sum.Findings = []EventFinding{}
		}
		for _, f := range fs {
			sum.Counts[f.Severity]++
		}
		for _, in := range integ {
			for _, f := range fs {
				if sc.PullRequest > 0 {
					var done bool
					if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM findings.outbox
						WHERE integration_id = $1 AND finding_id = $2 AND event = $3
						  AND payload->'scan'->>'repo_url' = $4 AND (payload->'scan'->>'pull_request')::int = $5)`,
						in, f.ID, EventReviewComment, sc.RepoURL, sc.PullRequest).Scan(&done); err != nil {
						return fmt.Errorf("earlier review comments: %w", err)
					}
					if done {
						continue
					}
				}
				ev := Event{Event: EventReviewComment, OccurredAt: now, Finding: f, Scan: sc, Changes: []Change{},
					Actor: EventActor{Username: "vulnscan", Source: "agent"}}
				b, err := json.Marshal(ev)
				if err != nil {
					return fmt.Errorf("encode event: %w", err)
				}
				if _, err := tx.Exec(ctx, `INSERT INTO findings.outbox (org_id, integration_id, finding_id, scan_id, event, payload)
					VALUES ($1, $2, $3, $4, $5, $6::jsonb)`, orgID, in, f.ID, scanID, EventReviewComment, string(b)); err != nil {
					return fmt.Errorf("enqueue review comment: %w", err)
				}
				queued++
			}
			b, err := json.Marshal(sum)
			if err != nil {
				return fmt.Errorf("encode event: %w", err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO findings.outbox (org_id, integration_id, scan_id, event, payload)
				VALUES ($1, $2, $3, $4, $5::jsonb)`, orgID, in, scanID, EventReviewSummary, string(b)); err != nil {
				return fmt.Errorf("enqueue review summary: %w", err)
			}
			queued++
		}
		return nil
	})
	return queued, err
}

// ScanOutbox lists the events queued for a scan (review comments and
// summary), for operators and tests.
func (s *Store) ScanOutbox(ctx context.Context, scanID string) ([]OutboxEvent, error) {
	rows, err := s.Pool.Query(ctx, `SELECT id, integration_id::text, status, attempts, last_error FROM findings.outbox WHERE scan_id = $1 ORDER BY id`, scanID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OutboxEvent, error) {
		var e OutboxEvent
		err := r.Scan(&e.ID, &e.IntegrationID, &e.Status, &e.Attempts, &e.LastError)
		return e, err
	})
}
