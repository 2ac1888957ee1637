// Package store is the scan service's data layer over its schema "scan":
// scans (with the state of their start saga) and context documents.
package store

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/boot"
	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
)

// Schema is the Postgres schema the scan service owns.
const Schema = "scan"

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies the scan schema migrations.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return db.Migrate(ctx, pool, Schema, migrations)
}

// ErrNotFound is returned for a missing or invisible record.
var ErrNotFound = errors.New("not found")

// Repo is one repository of a scan.
type Repo struct {
	URL    string `json:"url"`
	Branch string `json:"branch"`
	Source string `json:"source"`
}

// Scan is a scan row.
type Scan struct {
	ID, OrgID, UserID, TaskID, Status, StartState, ScanType, EstimationID string
	Repos                                                                 []Repo
	TargetURLs                                                            []string
	AuthInstructionsEnc                                                   []byte
	CustomContext                                                         string
	ContextDocumentIDs                                                    []string
	Credits, Progress                                                     int32
	Error                                                                 *string
	CreatedAt, UpdatedAt                                                  time.Time
	StartedAt, CompletedAt                                                *time.Time
}

const scanColumns = `id::text, org_id::text, user_id::text, task_id, status, start_state, scan_type, cost_estimation_id::text,
	repos, target_urls, auth_instructions_enc, custom_context, context_document_ids::text[], credits, progress, error,
	created_at, updated_at, started_at, completed_at`

func scanScan(row pgx.Row) (Scan, error) {
	var s Scan
	var repos []byte
	err := row.Scan(&s.ID, &s.OrgID, &s.UserID, &s.TaskID, &s.Status, &s.StartState, &s.ScanType, &s.EstimationID,
		&repos, &s.TargetURLs, &s.AuthInstructionsEnc, &s.CustomContext, &s.ContextDocumentIDs, &s.Credits, &s.Progress, &s.Error,
		&s.CreatedAt, &s.UpdatedAt, &s.StartedAt, &s.CompletedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, ErrNotFound
	}
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(repos, &s.Repos)
}

// Store runs the scan queries.
type Store struct{ Pool *pgxpool.Pool }

// InsertStarting records a scan whose start saga begins.
func (st *Store) InsertStarting(ctx context.Context, tx pgx.Tx, s Scan) error {
	repos, err := json.Marshal(s.Repos)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO scan.scans (id, org_id, user_id, task_id, cost_estimation_id, repos, target_urls,
		auth_instructions_enc, custom_context, context_document_ids, credits)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::uuid[], $11)`,
		s.ID, s.OrgID, s.UserID, s.TaskID, s.EstimationID, repos, s.TargetURLs, s.AuthInstructionsEnc, s.CustomContext, s.ContextDocumentIDs, s.Credits)
	if err != nil {
		return fmt.Errorf("insert scan: %w", err)
	}
	return nil
}

// MarkStarted completes the start saga, unless recovery aborted it first.
func (st *Store) MarkStarted(ctx context.Context, tx pgx.Tx, id string) (bool, error) {
	tag, err := tx.Exec(ctx, `UPDATE scan.scans SET start_state = 'started', updated_at = now() WHERE id = $1 AND start_state = 'starting'`, id)
	if err != nil {
		return false, fmt.Errorf("mark scan started: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// BeginAbort moves a scan whose start did not finish to 'aborting' and
// returns it; a scan already aborting is returned as well, so the undo steps
// can be retried. ok is false when the scan started or was aborted.
func (st *Store) BeginAbort(ctx context.Context, id string) (s Scan, ok bool, err error) {
	s, err = scanScan(st.Pool.QueryRow(ctx, `UPDATE scan.scans SET start_state = 'aborting', updated_at = now()
		WHERE id = $1 AND start_state IN ('starting', 'aborting') RETURNING `+scanColumns, id))
	if errors.Is(err, ErrNotFound) {
		return s, false, nil
	}
	return s, err == nil, err
}

// FinishAbort marks the undo of a start complete.
func (st *Store) FinishAbort(ctx context.Context, id string) error {
	_, err := st.Pool.Exec(ctx, `UPDATE scan.scans SET start_state = 'aborted', updated_at = now() WHERE id = $1 AND start_state = 'aborting'`, id)
	return err
}

// ByID returns any scan by id, for the workers.
func (st *Store) ByID(ctx context.Context, id string) (Scan, error) {
	return scanScan(st.Pool.QueryRow(ctx, `SELECT `+scanColumns+` FROM scan.scans WHERE id = $1`, id))
}

// Get returns a started scan of the organization.
func (st *Store) Get(ctx context.Context, orgID, id string) (Scan, error) {
	return scanScan(st.Pool.QueryRow(ctx, `SELECT `+scanColumns+` FROM scan.scans WHERE id = $1 AND org_id = $2 AND start_state = 'started'`, id, orgID))
}

// ListQuery selects a page of scans.
type ListQuery struct {
	OrgID, Status, SortBy, SortOrder string
	Page, Limit                      int32
}

var sortColumns = map[string]string{"created_at": "created_at", "updated_at": "updated_at", "status": "status"}

// List returns a page of the organization's started scans and their total.
func (st *Store) List(ctx context.Context, q ListQuery) ([]Scan, int32, error) {
	col, ok := sortColumns[q.SortBy]
	if !ok {
		return nil, 0, fmt.Errorf("bad sort column %q", q.SortBy)
	}
	dir := "DESC"
	if q.SortOrder == "ASC" {
		dir = "ASC"
	}
	where := `org_id = $1 AND start_state = 'started' AND ($2 = '' OR status = $2)`
	var total int32
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM scan.scans WHERE `+where, q.OrgID, q.Status).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := st.Pool.Query(ctx, `SELECT `+scanColumns+` FROM scan.scans WHERE `+where+
		` ORDER BY `+col+` `+dir+`, created_at `+dir+`, id `+dir+` LIMIT $3 OFFSET $4`,
		q.OrgID, q.Status, q.Limit, int64(q.Page-1)*int64(q.Limit))
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []Scan
	for rows.Next() {
		s, err := scanScan(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, s)
	}
	return out, total, rows.Err()
}

// SetRunning marks a pending scan running. It reports false when the scan
// is no longer pending or running (it was cancelled or ended), so the
// worker must not run it.
func (st *Store) SetRunning(ctx context.Context, id string) (bool, error) {
	tag, err := st.Pool.Exec(ctx, `UPDATE scan.scans SET status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
		WHERE id = $1 AND status IN ('pending', 'running')`, id)
	return tag.RowsAffected() == 1, err
}

// SetProgress records progress of a running scan; it never goes backwards.
func (st *Store) SetProgress(ctx context.Context, id string, p int32) error {
	_, err := st.Pool.Exec(ctx, `UPDATE scan.scans SET progress = greatest(progress, $2), updated_at = now() WHERE id = $1 AND status = 'running'`, id, p)
	return err
}

// Complete marks a running scan completed.
func (st *Store) Complete(ctx context.Context, id string) error {
	_, err := st.Pool.Exec(ctx, `UPDATE scan.scans SET status = 'completed', progress = 100, completed_at = now(), updated_at = now()
		WHERE id = $1 AND status IN ('pending', 'running')`, id)
	return err
}

// Fail marks a scan failed with a message for the user.
func (st *Store) Fail(ctx context.Context, id, msg string) (bool, error) {
	tag, err := st.Pool.Exec(ctx, `UPDATE scan.scans SET status = 'failed', error = $2, completed_at = now(), updated_at = now()
		WHERE id = $1 AND status IN ('pending', 'running')`, id, msg)
	return tag.RowsAffected() == 1, err
}

// Stranded returns started scans, not yet finished and idle for longer than
// idle, that no live River job will run any more.
func (st *Store) Stranded(ctx context.Context, idle time.Duration) ([]Scan, error) {
	rows, err := st.Pool.Query(ctx, `SELECT `+scanColumns+` FROM scan.scans s
		WHERE s.start_state = 'started' AND s.status IN ('pending', 'running') AND s.updated_at < now() - $1::interval
		AND NOT EXISTS (SELECT 1 FROM scan.river_job j WHERE j.kind = 'run_scan' AND j.args->>'scan_id' = s.id::text
			AND j.state IN ('available', 'pending', 'running', 'retryable', 'scheduled'))
		ORDER BY s.updated_at LIMIT 100`, idle)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Scan
	for rows.Next() {
		s, err := scanScan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Document is a context document.
type Document struct {
	ID, OrgID, Name, Content string
	Size                     int32
	CreatedAt                time.Time
}

// CreateDocument stores a context document.
func (st *Store) CreateDocument(ctx context.Context, d Document) (Document, error) {
	err := st.Pool.QueryRow(ctx, `INSERT INTO scan.context_documents (id, org_id, name, content, size) VALUES ($1, $2, $3, $4, $5) RETURNING created_at`,
		d.ID, d.OrgID, d.Name, d.Content, d.Size).Scan(&d.CreatedAt)
	return d, err
}

// ListDocuments lists the organization's documents without content.
func (st *Store) ListDocuments(ctx context.Context, orgID string) ([]Document, error) {
	rows, err := st.Pool.Query(ctx, `SELECT id::text, org_id::text, name, size, created_at FROM scan.context_documents WHERE org_id = $1 ORDER BY created_at DESC, id`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Document
	for rows.Next() {
		var d Document
		if err := rows.Scan(&d.ID, &d.OrgID, &d.Name, &d.Size, &d.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// GetDocument reads one document of the organization.
func (st *Store) GetDocument(ctx context.Context, orgID, id string) (Document, error) {
	var d Document
	err := st.Pool.QueryRow(ctx, `SELECT id::text, org_id::text, name, content, size, created_at FROM scan.context_documents WHERE id = $1 AND org_id = $2`, id, orgID).
		Scan(&d.ID, &d.OrgID, &d.Name, &d.Content, &d.Size, &d.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, ErrNotFound
	}
	return d, err
}

// MissingDocuments returns the ids that are not documents of the organization.
func (st *Store) MissingDocuments(ctx context.Context, orgID string, ids []string) ([]string, error) {
	rows, err := st.Pool.Query(ctx, `SELECT x::text FROM unnest($2::uuid[]) AS x WHERE NOT EXISTS
		(SELECT 1 FROM scan.context_documents d WHERE d.id = x AND d.org_id = $1)`, orgID, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// DocumentsContent returns the content of the given documents, in order.
func (st *Store) DocumentsContent(ctx context.Context, orgID string, ids []string) ([]Document, error) {
	var out []Document
	for _, id := range ids {
		d, err := st.GetDocument(ctx, orgID, id)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// AuthInstructionsAD binds a scan's sealed auth instructions to its row.
func AuthInstructionsAD(scanID string) secretbox.AD {
	return secretbox.AD{Table: "scan.scans", Column: "auth_instructions_enc", Row: scanID}
}

// SealedColumns are the scan schema's sealed columns, re-sealed on start
// when still in the legacy format.
var SealedColumns = []boot.SealedColumn{
	{Table: "scan.scans", Column: "auth_instructions_enc", Key: "id", RowExpr: "id::text"},
}
