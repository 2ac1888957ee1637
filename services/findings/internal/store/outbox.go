package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/boot"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/wiretext"
)

// IntegrationTokenAD and IntegrationSecretAD bind an integration's sealed
// credentials to its row and to their purpose: a token cannot be opened as a
// signing secret, nor on another integration.
func IntegrationTokenAD(id string) secretbox.AD {
	return secretbox.AD{Table: "findings.integrations", Column: "token_enc", Row: id}
}

// IntegrationURLAD binds an integration's sealed URL (a webhook's is a
// credential) to its row.
func IntegrationURLAD(id string) secretbox.AD {
	return secretbox.AD{Table: "findings.integrations", Column: "url_enc", Row: id}
}

// IntegrationSecretAD: see IntegrationTokenAD.
func IntegrationSecretAD(id string) secretbox.AD {
	return secretbox.AD{Table: "findings.integrations", Column: "secret_enc", Row: id}
}

// SealedColumns are the findings schema's sealed columns, re-sealed on start
// when still in the legacy format.
var SealedColumns = []boot.SealedColumn{
	{Table: "findings.integrations", Column: "token_enc", Key: "id", RowExpr: "id::text"},
	{Table: "findings.integrations", Column: "secret_enc", Key: "id", RowExpr: "id::text"},
	{Table: "findings.integrations", Column: "inbound_secret_enc", Key: "id", RowExpr: "id::text"},
}

// IntegrationInboundSecretAD binds an integration's sealed inbound secret
// (which verifies the events it receives) to its row and purpose.
func IntegrationInboundSecretAD(id string) secretbox.AD {
	return secretbox.AD{Table: "findings.integrations", Column: "inbound_secret_enc", Row: id}
}

// Integration is an organization's outbound integration.
type Integration struct {
	// URL is what may be shown; for a webhook it is the redacted form and
	// URLEnc holds the sealed URL that deliveries post to.
	ID, OrgID, Kind, Name, URL, Project string
	URLEnc, TokenEnc, SecretEnc         []byte
	InboundSecretEnc                    []byte
	CreatedAt                           time.Time
	RemovedAt                           *time.Time
}

const integrationCols = `id::text, org_id::text, kind, name, url, project, url_enc, token_enc, secret_enc, created_at, removed_at, inbound_secret_enc`

func scanIntegration(r scanner) (Integration, error) {
	var i Integration
	err := r.Scan(&i.ID, &i.OrgID, &i.Kind, &i.Name, &i.URL, &i.Project, &i.URLEnc, &i.TokenEnc, &i.SecretEnc, &i.CreatedAt, &i.RemovedAt, &i.InboundSecretEnc)
	return i, err
}

// AddIntegration stores an integration.
func (s *Store) AddIntegration(ctx context.Context, i Integration) (Integration, error) {
	if i.ID == "" {
		i.ID = uuid.NewString()
	}
	row := s.Pool.QueryRow(ctx, `INSERT INTO findings.integrations (id, org_id, kind, name, url, project, url_enc, token_enc, secret_enc, inbound_secret_enc)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING `+integrationCols,
		i.ID, i.OrgID, i.Kind, i.Name, i.URL, i.Project, i.URLEnc, i.TokenEnc, i.SecretEnc, i.InboundSecretEnc)
	out, err := scanIntegration(row)
	if err != nil {
		return out, fmt.Errorf("insert integration: %w", err)
	}
	return out, nil
}

// SealWebhookURLs seals the URL of every webhook integration stored before
// URLs were sealed, replacing the clear text with display(url). It is
// idempotent and runs on start; it returns how many rows it sealed.
func (s *Store) SealWebhookURLs(ctx context.Context, kind string, seal func(id string, url []byte) ([]byte, error), display func(string) string) (int, error) {
	rows, err := s.Pool.Query(ctx, `SELECT id::text, url FROM findings.integrations WHERE kind = $1 AND url_enc IS NULL`, kind)
	if err != nil {
		return 0, fmt.Errorf("list unsealed webhooks: %w", err)
	}
	type row struct{ id, url string }
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		return x, r.Scan(&x.id, &x.url)
	})
	if err != nil {
		return 0, fmt.Errorf("list unsealed webhooks: %w", err)
	}
	for _, x := range list {
		enc, err := seal(x.id, []byte(x.url))
		if err != nil {
			return 0, fmt.Errorf("seal webhook url: %w", err)
		}
		if _, err := s.Pool.Exec(ctx, `UPDATE findings.integrations SET url_enc = $2, url = $3 WHERE id = $1 AND url_enc IS NULL`,
			x.id, enc, display(x.url)); err != nil {
			return 0, fmt.Errorf("seal webhook url: %w", err)
		}
	}
	return len(list), nil
}

// ListIntegrations lists an organization's active integrations.
func (s *Store) ListIntegrations(ctx context.Context, orgID string) ([]Integration, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+integrationCols+` FROM findings.integrations WHERE org_id = $1 AND removed_at IS NULL ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list integrations: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Integration, error) { return scanIntegration(r) })
}

// RemoveIntegration stops an integration; its pending events are dropped.
func (s *Store) RemoveIntegration(ctx context.Context, id string) (Integration, error) {
	row := s.Pool.QueryRow(ctx, `UPDATE findings.integrations SET removed_at = now() WHERE id = $1 AND removed_at IS NULL RETURNING `+integrationCols, id)
	i, err := scanIntegration(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return i, ErrNotFound
	}
	if err != nil {
		return i, fmt.Errorf("remove integration: %w", err)
	}
	if _, err := s.Pool.Exec(ctx, `UPDATE findings.outbox SET status = 'dead', last_error = 'integration removed' WHERE integration_id = $1 AND status = 'pending'`, id); err != nil {
		return i, fmt.Errorf("drop events: %w", err)
	}
	return i, nil
}

// Delivery is an outbox event claimed for delivery.
type Delivery struct {
	ID          int64
	Attempts    int
	Event       string
	Payload     []byte
	FindingID   string
	Integration Integration
	ExternalID  string // issue already created for the finding, if any
}

// Claim takes up to n due events, the oldest pending one of each
// (integration, finding) pair so that a finding's events arrive in order.
// A claimed event is leased for lease: if the worker dies, it is due again
// afterwards.
func (s *Store) Claim(ctx context.Context, n int, lease time.Duration) ([]Delivery, error) {
	rows, err := s.Pool.Query(ctx, `UPDATE findings.outbox o SET attempts = o.attempts + 1, next_attempt_at = now() + $2 * interval '1 millisecond'
		FROM (
			SELECT id FROM findings.outbox p WHERE status = 'pending' AND next_attempt_at <= now()
			  AND NOT EXISTS (SELECT 1 FROM findings.outbox q WHERE q.status = 'pending' AND q.integration_id = p.integration_id
			                  AND q.finding_id = p.finding_id AND q.id < p.id)
			ORDER BY next_attempt_at, id LIMIT $1 FOR UPDATE SKIP LOCKED
		) due
		WHERE o.id = due.id
		RETURNING o.id, o.attempts, o.event, o.payload, coalesce(o.finding_id::text, ''), o.integration_id::text`, n, lease.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("claim events: %w", err)
	}
	type claimed struct {
		d     Delivery
		integ string
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (claimed, error) {
		var c claimed
		err := r.Scan(&c.d.ID, &c.d.Attempts, &c.d.Event, &c.d.Payload, &c.d.FindingID, &c.integ)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("claim events: %w", err)
	}
	out := make([]Delivery, 0, len(cs))
	for _, c := range cs {
		row := s.Pool.QueryRow(ctx, `SELECT `+integrationCols+` FROM findings.integrations WHERE id = $1`, c.integ)
		if c.d.Integration, err = scanIntegration(row); err != nil {
			return nil, fmt.Errorf("event integration: %w", err)
		}
		if c.d.FindingID != "" { // a batch event has no finding and no link
			err := s.Pool.QueryRow(ctx, `SELECT external_id FROM findings.integration_links WHERE integration_id = $1 AND finding_id = $2`,
				c.integ, c.d.FindingID).Scan(&c.d.ExternalID)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return nil, fmt.Errorf("integration link: %w", err)
			}
		}
		out = append(out, c.d)
	}
	return out, nil
}

// Delivered marks an event delivered, remembering the external issue the
// receiver created for the finding, if any.
func (s *Store) Delivered(ctx context.Context, d Delivery, externalID string) error {
	externalID = wiretext.Clean(externalID) // read from the receiver's answer
	if externalID != "" && externalID != d.ExternalID && d.FindingID != "" {
		if _, err := s.Pool.Exec(ctx, `INSERT INTO findings.integration_links (integration_id, finding_id, external_id) VALUES ($1, $2, $3)
			ON CONFLICT (integration_id, finding_id) DO UPDATE SET external_id = EXCLUDED.external_id`, d.Integration.ID, d.FindingID, externalID); err != nil {
			return fmt.Errorf("link issue: %w", err)
		}
	}
	_, err := s.Pool.Exec(ctx, `UPDATE findings.outbox SET status = 'delivered', delivered_at = now(), last_error = NULL WHERE id = $1`, d.ID)
	return err
}

// Failed schedules another attempt after backoff, or dead-letters the event
// when dead is true.
func (s *Store) Failed(ctx context.Context, d Delivery, reason string, backoff time.Duration, dead bool) error {
	// The reason may quote a receiver's answer or an address: stored
	// as valid text, cut at a character boundary.
	reason = wiretext.Cut(reason, 500)
	status := "pending"
	if dead {
		status = "dead"
	}
	_, err := s.Pool.Exec(ctx, `UPDATE findings.outbox SET status = $2, last_error = $3, next_attempt_at = now() + $4 * interval '1 millisecond' WHERE id = $1`,
		d.ID, status, reason, backoff.Milliseconds())
	return err
}

// OutboxEvent is an outbox row, for operators and tests.
type OutboxEvent struct {
	ID                    int64
	IntegrationID, Status string
	Attempts              int
	LastError             *string
}
