package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"
)

// Envelope is every payload's outer object.
type Envelope struct {
	Version   int       `json:"version"`
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      any       `json:"data"`
}

// Actor is who caused a finding event.
type Actor struct {
	UserID   string `json:"user_id"`
	Username string `json:"username"`
	// Source is api, web, github, slack or agent (the service itself).
	Source string `json:"source"`
}

// FindingItem is one finding's part of a finding event.
type FindingItem struct {
	ID string
	// Changes are the changed fields ({field, from, to, reason}); nil for
	// a created or commented finding.
	Changes any
	Comment string
}

// FindingData is a finding as finding.* payloads carry it.
type FindingData struct {
	ID              string     `json:"id"`
	Title           string     `json:"title"`
	Category        string     `json:"category"`
	Severity        string     `json:"severity"`
	State           string     `json:"state"`
	AffectedFile    string     `json:"affected_file"`
	Line            *int32     `json:"line"`
	Fingerprint     string     `json:"fingerprint"`
	DuplicateOf     *string    `json:"duplicate_of"`
	ScanID          string     `json:"scan_id"`
	RepoURL         string     `json:"repo_url"`
	OccurrenceCount int32      `json:"occurrence_count"`
	FoundAt         time.Time  `json:"found_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
	RiskExpiresAt   *time.Time `json:"risk_expires_at"`
}

type findingPayload struct {
	Finding FindingData `json:"finding"`
	Changes any         `json:"changes,omitempty"`
	Comment string      `json:"comment,omitempty"`
	Actor   *Actor      `json:"actor,omitempty"`
}

// subscribers returns the organization's active webhooks subscribed to typ.
func subscribers(ctx context.Context, q db.DBTX, orgID, typ string) ([]string, error) {
	var ids []string
	if err := q.QueryRow(ctx, `SELECT coalesce(array_agg(id::text ORDER BY id), '{}') FROM findings.webhooks
		WHERE org_id = $1 AND removed_at IS NULL AND $2 = ANY(events)`, orgID, typ).Scan(&ids); err != nil {
		return nil, fmt.Errorf("webhook subscribers: %w", err)
	}
	return ids, nil
}

// EmitFindings writes, inside tx, one typ event per finding of items and
// one delivery per subscribed webhook of the organization. The payload
// shows each finding as it is in tx, after the change. Nothing is written
// when no webhook subscribes to typ.
func EmitFindings(ctx context.Context, tx pgx.Tx, orgID, typ string, items []FindingItem, actor *Actor) error {
	hooks, found, err := audience(ctx, tx, orgID, typ, items)
	if err != nil || len(hooks) == 0 {
		return err
	}
	now := time.Now().UTC()
	evIDs := make([]string, len(items))
	payloads := make([]string, len(items))
	for i, it := range items {
		evIDs[i] = uuid.NewString()
		if payloads[i], err = encode(evIDs[i], typ, now, findingPayload{Finding: found[i], Changes: it.Changes, Comment: it.Comment, Actor: actor}); err != nil {
			return err
		}
	}
	return insertEvents(ctx, tx, orgID, typ, evIDs, payloads, hooks)
}

// batchPayload is the data of a finding.bulk_updated event.
type batchPayload struct {
	BatchID  string         `json:"batch_id"`
	Findings []batchFinding `json:"findings"`
	Comment  string         `json:"comment,omitempty"`
	Actor    *Actor         `json:"actor"`
}

type batchFinding struct {
	Finding FindingData `json:"finding"`
	Changes any         `json:"changes"`
}

// EmitBatch writes, inside tx, the one finding.bulk_updated event of a bulk
// change (every changed finding of items, after the change, with its
// changes) and one delivery per webhook of the organization subscribed to
// finding.updated: a bulk change reaches each webhook as one message, not
// one per finding. Nothing is written when no webhook subscribes.
func EmitBatch(ctx context.Context, tx pgx.Tx, orgID, batchID string, items []FindingItem, comment string, actor *Actor) error {
	hooks, found, err := audience(ctx, tx, orgID, FindingUpdated, items)
	if err != nil || len(hooks) == 0 {
		return err
	}
	data := batchPayload{BatchID: batchID, Findings: make([]batchFinding, len(items)), Comment: comment, Actor: actor}
	for i, it := range items {
		data.Findings[i] = batchFinding{Finding: found[i], Changes: it.Changes}
	}
	id := uuid.NewString()
	payload, err := encode(id, FindingBulkUpdated, time.Now().UTC(), data)
	if err != nil {
		return err
	}
	return insertEvents(ctx, tx, orgID, FindingBulkUpdated, []string{id}, []string{payload}, hooks)
}

// audience returns the organization's webhooks subscribed to typ and,
// when there are any, the findings of items as they are in tx; no webhooks
// when items is empty.
func audience(ctx context.Context, tx pgx.Tx, orgID, typ string, items []FindingItem) ([]string, []FindingData, error) {
	if len(items) == 0 {
		return nil, nil, nil
	}
	hooks, err := subscribers(ctx, tx, orgID, typ)
	if err != nil || len(hooks) == 0 {
		return nil, nil, err
	}
	found, err := loadFindings(ctx, tx, items)
	if err != nil {
		return nil, nil, err
	}
	return hooks, found, nil
}

// encode renders an event's payload: data in the versioned envelope.
func encode(id, typ string, at time.Time, data any) (string, error) {
	b, err := json.Marshal(Envelope{Version: PayloadVersion, ID: id, Type: typ, Timestamp: at, Data: data})
	if err != nil {
		return "", fmt.Errorf("encode webhook event: %w", err)
	}
	return string(b), nil
}

// loadFindings reads the findings of items as they are in tx, in order.
func loadFindings(ctx context.Context, tx pgx.Tx, items []FindingItem) ([]FindingData, error) {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	rows, err := tx.Query(ctx, `SELECT f.id::text, f.title, f.category, f.severity, f.state, f.affected_file, f.start_line, f.fingerprint,
			f.duplicate_of::text, f.scan_id::text, s.repo_url, f.occurrence_count, f.found_at, f.updated_at, f.risk_expires_at
		FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, ord) JOIN findings.findings f ON f.id = u.id JOIN findings.scans s ON s.id = f.scan_id
		ORDER BY u.ord`, db.UUIDArray(ids))
	if err != nil {
		return nil, fmt.Errorf("webhook event findings: %w", err)
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (FindingData, error) {
		var f FindingData
		var line int32
		err := r.Scan(&f.ID, &f.Title, &f.Category, &f.Severity, &f.State, &f.AffectedFile, &line, &f.Fingerprint,
			&f.DuplicateOf, &f.ScanID, &f.RepoURL, &f.OccurrenceCount, &f.FoundAt, &f.UpdatedAt, &f.RiskExpiresAt)
		if line > 0 {
			f.Line = &line
		}
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("webhook event findings: %w", err)
	}
	if len(found) != len(items) {
		return nil, fmt.Errorf("webhook event findings: %d of %d findings not found", len(items)-len(found), len(items))
	}
	return found, nil
}

func insertEvents(ctx context.Context, tx pgx.Tx, orgID, typ string, evIDs, payloads, hooks []string) error {
	if _, err := tx.Exec(ctx, `WITH ev AS (
			INSERT INTO findings.webhook_events (id, org_id, type, payload)
			SELECT e.id, $1, $2, e.payload::jsonb FROM unnest($3::uuid[], $4::text[]) AS e(id, payload)
			RETURNING id)
		INSERT INTO findings.webhook_deliveries (id, webhook_id, event_id)
		SELECT gen_random_uuid(), w.id, ev.id FROM ev CROSS JOIN unnest($5::uuid[]) AS w(id)`, orgID, typ, db.UUIDArray(evIDs), payloads, db.UUIDArray(hooks)); err != nil {
		return fmt.Errorf("write webhook events: %w", err)
	}
	return nil
}

// Publish records an event another service publishes (scan.*,
// estimation.*) and queues its deliveries. It is idempotent by eventID: an
// event already recorded queues nothing and returns 0.
func (s *Store) Publish(ctx context.Context, eventID, orgID, typ string, occurred time.Time, data any) (int, error) {
	var n int
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		payload, err := encode(eventID, typ, occurred.UTC(), data)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO findings.webhook_events (id, org_id, type, payload) VALUES ($1, $2, $3, $4::jsonb)
			ON CONFLICT (id) DO NOTHING`, eventID, orgID, typ, payload)
		if err != nil {
			return fmt.Errorf("write webhook event: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		hooks, err := subscribers(ctx, tx, orgID, typ)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO findings.webhook_deliveries (id, webhook_id, event_id)
			SELECT gen_random_uuid(), w.id, $1 FROM unnest($2::uuid[]) AS w(id)`, eventID, db.UUIDArray(hooks)); err != nil {
			return fmt.Errorf("queue webhook deliveries: %w", err)
		}
		n = len(hooks)
		return nil
	})
	return n, err
}
