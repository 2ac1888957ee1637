package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"
)

// The integrations' outbox events, written in the transaction of the change
// that causes them (package delivery sends them): one event per finding
// and integration for a single change or comment, one per scan and
// integration for a bulk change.

// Event is the payload of an outbox event.
type Event struct {
	Event      string       `json:"event"`
	OccurredAt time.Time    `json:"occurred_at"`
	Finding    EventFinding `json:"finding"`
	Scan       EventScan    `json:"scan"`
	Changes    []Change     `json:"changes"`
	Comment    string       `json:"comment,omitempty"`
	Actor      EventActor   `json:"actor"`
}

type EventFinding struct {
	ID           string  `json:"id"`
	Title        string  `json:"title"`
	Category     string  `json:"category"`
	Severity     string  `json:"severity"`
	State        string  `json:"state"`
	AffectedFile string  `json:"affected_file"`
	StartLine    int32   `json:"start_line"`
	DuplicateOf  *string `json:"duplicate_of"`
}

type EventScan struct {
	ID          string `json:"id"`
	RepoURL     string `json:"repo_url"`
	ScanType    string `json:"scan_type"`
	CommitSHA   string `json:"commit_sha"`
	PullRequest int32  `json:"pull_request"`
}

type EventActor struct {
	UserID   string `json:"user_id"`
	Username string `json:"username"`
	Source   string `json:"source"`
}

// enqueue writes one outbox event per active integration of the organization.
func enqueue(ctx context.Context, tx pgx.Tx, orgID, id, event string, actor Actor, changes []Change, comment string) error {
	return enqueueMany(ctx, tx, orgID, []string{id}, event, actor, changes, comment)
}

// enqueueMany writes, for each finding of ids, one outbox event per active
// integration of the organization, all in one statement.
func enqueueMany(ctx context.Context, tx pgx.Tx, orgID string, ids []string, event string, actor Actor, changes []Change, comment string) error {
	origin := nullIfEmpty(actor.Origin)
	fs, scans, err := eventFindings(ctx, tx, orgID, origin, ids)
	if err != nil || len(fs) == 0 {
		return err
	}
	if changes == nil {
		changes = []Change{}
	}
	occurred := time.Now().UTC()
	evIDs := make([]string, len(fs))
	payloads := make([]string, len(fs))
	for i, f := range fs {
		payload, err := json.Marshal(Event{Event: event, OccurredAt: occurred, Finding: f, Scan: scans[i], Changes: changes, Comment: comment,
			Actor: eventActor(actor)})
		if err != nil {
			return fmt.Errorf("encode event: %w", err)
		}
		evIDs[i], payloads[i] = f.ID, string(payload)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO findings.outbox (org_id, integration_id, finding_id, event, payload)
		SELECT $1, i.id, e.id, $2, e.payload::jsonb
		FROM unnest($3::uuid[], $4::text[]) WITH ORDINALITY AS e(id, payload, ord)
		CROSS JOIN findings.integrations i WHERE i.org_id = $1 AND i.removed_at IS NULL AND i.id IS DISTINCT FROM $5::uuid
		ORDER BY e.ord, i.id`, orgID, event, db.UUIDArray(evIDs), payloads, origin); err != nil {
		return fmt.Errorf("enqueue events: %w", err)
	}
	return nil
}

func eventActor(a Actor) EventActor {
	return EventActor{UserID: a.UserID, Username: a.Username, Source: a.Source}
}

// eventFindings reads the findings of ids, in order, with their scans, as
// events show them, after the change. It reads nothing and returns none
// when the organization has no active integration to tell (besides
// origin, the one a change came in through).
func eventFindings(ctx context.Context, tx pgx.Tx, orgID string, origin *string, ids []string) ([]EventFinding, []EventScan, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM findings.integrations WHERE org_id = $1 AND removed_at IS NULL
		AND id IS DISTINCT FROM $2::uuid`, orgID, origin).Scan(&n); err != nil {
		return nil, nil, fmt.Errorf("count integrations: %w", err)
	}
	if n == 0 || len(ids) == 0 {
		return nil, nil, nil
	}
	rows, err := tx.Query(ctx, `SELECT f.id::text, f.title, f.category, f.severity, f.state, f.affected_file, f.start_line, f.duplicate_of::text,
		s.id::text, s.repo_url, s.scan_type, s.commit_sha, s.pull_request
		FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, ord) JOIN findings.findings f ON f.id = u.id JOIN findings.scans s ON s.id = f.scan_id
		ORDER BY u.ord`, db.UUIDArray(ids))
	if err != nil {
		return nil, nil, fmt.Errorf("event findings: %w", err)
	}
	var fs []EventFinding
	var scans []EventScan
	_, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct{}, error) {
		var f EventFinding
		var sc EventScan
		err := r.Scan(&f.ID, &f.Title, &f.Category, &f.Severity, &f.State, &f.AffectedFile, &f.StartLine, &f.DuplicateOf,
			&sc.ID, &sc.RepoURL, &sc.ScanType, &sc.CommitSHA, &sc.PullRequest)
		fs, scans = append(fs, f), append(scans, sc)
		return struct{}{}, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("event findings: %w", err)
	}
	if len(fs) != len(ids) {
		return nil, nil, fmt.Errorf("event findings: %d of %d findings not found", len(ids)-len(fs), len(ids))
	}
	return fs, scans, nil
}

// EventBulkUpdated is the outbox event of a bulk change.
const EventBulkUpdated = "finding.bulk_updated"

// BatchEvent is the payload of one bulk change's event for one scan.
type BatchEvent struct {
	Event      string         `json:"event"`
	BatchID    string         `json:"batch_id"`
	OccurredAt time.Time      `json:"occurred_at"`
	Scan       EventScan      `json:"scan"`
	Findings   []BatchFinding `json:"findings"`
	Comment    string         `json:"comment,omitempty"`
	Actor      EventActor     `json:"actor"`
}

// BatchFinding is one changed finding of a batch event with its changes.
type BatchFinding struct {
	EventFinding
	Changes []Change `json:"changes"`
}

// enqueueBatch writes, per active integration, one event per scan holding
// the batch's changed findings of that scan (a git hosting comment lands on
// one commit or pull request, so a scan is the widest common target).
func enqueueBatch(ctx context.Context, tx pgx.Tx, orgID, batchID string, ids []string, changes map[string][]Change, actor Actor, comment string) error {
	fs, fscans, err := eventFindings(ctx, tx, orgID, nil, ids)
	if err != nil || len(fs) == 0 {
		return err
	}
	occurred := time.Now().UTC()
	byScan := map[string]*BatchEvent{}
	var scans []string
	for i, f := range fs {
		sc := fscans[i]
		ev := byScan[sc.ID]
		if ev == nil {
			ev = &BatchEvent{Event: EventBulkUpdated, BatchID: batchID, OccurredAt: occurred, Scan: sc, Comment: comment, Actor: eventActor(actor)}
			byScan[sc.ID] = ev
			scans = append(scans, sc.ID)
		}
		ev.Findings = append(ev.Findings, BatchFinding{EventFinding: f, Changes: changes[f.ID]})
	}
	payloads := make([]string, len(scans))
	for i, id := range scans {
		b, err := json.Marshal(byScan[id])
		if err != nil {
			return fmt.Errorf("encode event: %w", err)
		}
		payloads[i] = string(b)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO findings.outbox (org_id, integration_id, finding_id, batch_id, event, payload)
		SELECT $1, i.id, NULL, $2, $3, e.payload::jsonb
		FROM unnest($4::text[]) WITH ORDINALITY AS e(payload, ord)
		CROSS JOIN findings.integrations i WHERE i.org_id = $1 AND i.removed_at IS NULL
		ORDER BY e.ord, i.id`, orgID, batchID, EventBulkUpdated, payloads); err != nil {
		return fmt.Errorf("enqueue batch events: %w", err)
	}
	return nil
}
