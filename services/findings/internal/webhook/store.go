package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/wiretext"
)

// Errors the store reports.
var (
	ErrNotFound = errors.New("not found")
	ErrLimit    = errors.New("webhook limit reached")
)

// URLAD and SecretAD bind a webhook's sealed URL and signing secret to its
// row and purpose.
func URLAD(id string) secretbox.AD {
	return secretbox.AD{Table: "findings.webhooks", Column: "url_enc", Row: id}
}

// SecretAD: see URLAD.
func SecretAD(id string) secretbox.AD {
	return secretbox.AD{Table: "findings.webhooks", Column: "secret_enc", Row: id}
}

// Store is the webhooks' data layer over the findings schema.
type Store struct {
	Pool *pgxpool.Pool
}

// Webhook is a registered endpoint.
type Webhook struct {
	ID, OrgID, URL, Description string // URL is the display form
	URLEnc, SecretEnc           []byte
	Events                      []string
	CreatedAt                   time.Time
}

const webhookCols = `id::text, org_id::text, url_display, url_enc, secret_enc, events, description, created_at`

func scanWebhook(r pgx.Row) (Webhook, error) {
	var w Webhook
	err := r.Scan(&w.ID, &w.OrgID, &w.URL, &w.URLEnc, &w.SecretEnc, &w.Events, &w.Description, &w.CreatedAt)
	return w, err
}

// Create stores w unless its organization already has max active webhooks
// (ErrLimit). Creations of one organization are serialized by an advisory
// lock so that concurrent ones cannot pass the limit together.
func (s *Store) Create(ctx context.Context, w Webhook, max int) (Webhook, error) {
	var out Webhook
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('findings.webhooks:' || $1, 0))`, w.OrgID); err != nil {
			return fmt.Errorf("lock organization webhooks: %w", err)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM findings.webhooks WHERE org_id = $1 AND removed_at IS NULL`, w.OrgID).Scan(&n); err != nil {
			return fmt.Errorf("count webhooks: %w", err)
		}
		if n >= max {
			return ErrLimit
		}
		var err error
		out, err = scanWebhook(tx.QueryRow(ctx, `INSERT INTO findings.webhooks (id, org_id, url_display, url_enc, secret_enc, events, description)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+webhookCols, w.ID, w.OrgID, w.URL, w.URLEnc, w.SecretEnc, w.Events, w.Description))
		if err != nil {
			return fmt.Errorf("insert webhook: %w", err)
		}
		return nil
	})
	return out, err
}

// List returns an organization's active webhooks, oldest first.
func (s *Store) List(ctx context.Context, orgID string) ([]Webhook, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+webhookCols+` FROM findings.webhooks WHERE org_id = $1 AND removed_at IS NULL ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Webhook, error) { return scanWebhook(r) })
}

// Get returns an active webhook; with orgID set, only the organization's.
func (s *Store) Get(ctx context.Context, orgID, id string) (Webhook, error) {
	w, err := scanWebhook(s.Pool.QueryRow(ctx, `SELECT `+webhookCols+` FROM findings.webhooks
		WHERE id = $1 AND ($2 = '' OR org_id::text = $2) AND removed_at IS NULL`, id, orgID))
	if errors.Is(err, pgx.ErrNoRows) {
		return w, ErrNotFound
	}
	if err != nil {
		return w, fmt.Errorf("get webhook: %w", err)
	}
	return w, nil
}

// Remove stops an organization's webhook; its pending deliveries fail.
func (s *Store) Remove(ctx context.Context, orgID, id string) error {
	return db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE findings.webhooks SET removed_at = now() WHERE id = $1 AND org_id = $2 AND removed_at IS NULL`, id, orgID)
		if err != nil {
			return fmt.Errorf("remove webhook: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		if _, err := tx.Exec(ctx, `UPDATE findings.webhook_deliveries SET status = 'failed', last_error = 'webhook removed'
			WHERE webhook_id = $1 AND status = 'pending'`, id); err != nil {
			return fmt.Errorf("drop deliveries: %w", err)
		}
		return nil
	})
}

// Delivery is one event's delivery to one webhook, as the log shows it.
type Delivery struct {
	ID, WebhookID, EventID, Event, Status string
	Attempts                              int32
	LastStatusCode                        *int32
	LastError                             *string
	CreatedAt                             time.Time
	LastAttemptAt, DeliveredAt            *time.Time
	NextAttemptAt                         *time.Time // set while pending
}

const deliveryCols = `d.id::text, d.webhook_id::text, d.event_id::text, e.type, d.status, d.attempts, d.last_status_code, d.last_error,
	d.created_at, d.last_attempt_at, d.delivered_at, CASE WHEN d.status = 'pending' THEN d.next_attempt_at END`

func scanDelivery(r pgx.Row) (Delivery, error) {
	var d Delivery
	err := r.Scan(&d.ID, &d.WebhookID, &d.EventID, &d.Event, &d.Status, &d.Attempts, &d.LastStatusCode, &d.LastError,
		&d.CreatedAt, &d.LastAttemptAt, &d.DeliveredAt, &d.NextAttemptAt)
	return d, err
}

// Deliveries pages through a webhook's deliveries, newest first, and
// returns their total.
func (s *Store) Deliveries(ctx context.Context, webhookID string, limit, offset int) ([]Delivery, int, error) {
	var total int
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM findings.webhook_deliveries WHERE webhook_id = $1`, webhookID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count deliveries: %w", err)
	}
	rows, err := s.Pool.Query(ctx, `SELECT `+deliveryCols+` FROM findings.webhook_deliveries d JOIN findings.webhook_events e ON e.id = d.event_id
		WHERE d.webhook_id = $1 ORDER BY d.created_at DESC, d.id DESC LIMIT $2 OFFSET $3`, webhookID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list deliveries: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Delivery, error) { return scanDelivery(r) })
	if err != nil {
		return nil, 0, fmt.Errorf("list deliveries: %w", err)
	}
	return list, total, nil
}

// Redeliver makes a delivery of an active webhook due now (a new attempt,
// whatever its status); with webhookID or orgID set, only a delivery of
// that webhook or organization. A redelivered delivery that fails again
// is not retried further: it already used its attempts.
func (s *Store) Redeliver(ctx context.Context, orgID, webhookID, id string) (Delivery, error) {
	d, err := scanDelivery(s.Pool.QueryRow(ctx, `WITH u AS (
			UPDATE findings.webhook_deliveries d SET status = 'pending', next_attempt_at = now(), delivered_at = NULL
			FROM findings.webhooks w
			WHERE d.id = $1 AND w.id = d.webhook_id AND w.removed_at IS NULL
			  AND ($2 = '' OR w.id::text = $2) AND ($3 = '' OR w.org_id::text = $3)
			RETURNING d.*)
		SELECT `+deliveryCols+` FROM u d JOIN findings.webhook_events e ON e.id = d.event_id`, id, webhookID, orgID))
	if errors.Is(err, pgx.ErrNoRows) {
		return d, ErrNotFound
	}
	if err != nil {
		return d, fmt.Errorf("redeliver: %w", err)
	}
	return d, nil
}

// due is a delivery claimed for an attempt.
type due struct {
	ID, EventID, Type string
	Attempts          int
	Payload           []byte
	Webhook           Webhook
}

// claim takes up to n due deliveries and leases them for lease (a worker
// that dies leaves them due again afterwards).
func (s *Store) claim(ctx context.Context, n int, lease time.Duration) ([]due, error) {
	rows, err := s.Pool.Query(ctx, `WITH c AS (
			UPDATE findings.webhook_deliveries d SET attempts = d.attempts + 1, last_attempt_at = now(),
				next_attempt_at = now() + $2 * interval '1 millisecond'
			FROM (SELECT id FROM findings.webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now()
			      ORDER BY next_attempt_at, id LIMIT $1 FOR UPDATE SKIP LOCKED) x
			WHERE d.id = x.id RETURNING d.id, d.event_id, d.webhook_id, d.attempts)
		SELECT c.id::text, c.event_id::text, e.type, c.attempts, e.payload::text, w.id::text, w.org_id::text, w.url_display, w.url_enc, w.secret_enc, w.events, w.description, w.created_at
		FROM c JOIN findings.webhook_events e ON e.id = c.event_id JOIN findings.webhooks w ON w.id = c.webhook_id`, n, lease.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
		var d due
		var payload string
		w := &d.Webhook
		err := r.Scan(&d.ID, &d.EventID, &d.Type, &d.Attempts, &payload,
			&w.ID, &w.OrgID, &w.URL, &w.URLEnc, &w.SecretEnc, &w.Events, &w.Description, &w.CreatedAt)
		d.Payload = []byte(payload)
		return d, err
	})
}

// attempted records an attempt's outcome: delivered, or failed with its
// status code (0: no answer) and error, due again after backoff unless
// final.
func (s *Store) attempted(ctx context.Context, id string, delivered bool, code int, reason string, backoff time.Duration, final bool) error {
	var codeArg *int
	if code > 0 {
		codeArg = &code
	}
	if delivered {
		_, err := s.Pool.Exec(ctx, `UPDATE findings.webhook_deliveries SET status = 'delivered', delivered_at = now(), last_status_code = $2, last_error = NULL
			WHERE id = $1`, id, codeArg)
		return err
	}
	// The reason may quote a receiver's answer or an address: stored
	// as valid text, cut at a character boundary.
	reason = wiretext.Cut(reason, 500)
	status := "pending"
	if final {
		status = "failed"
	}
	_, err := s.Pool.Exec(ctx, `UPDATE findings.webhook_deliveries SET status = $2, last_status_code = $3, last_error = $4,
		next_attempt_at = now() + $5 * interval '1 millisecond' WHERE id = $1 AND status = 'pending'`, id, status, codeArg, reason, backoff.Milliseconds())
	return err
}
