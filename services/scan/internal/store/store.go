// Package store is the scan service's data layer over its schema "scan":
// scans (with the state of their start saga) and context documents.
package store

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/boot"
	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// ErrNotFound is returned for a missing or invisible record.
var ErrNotFound = errors.New("not found")

// Repo is one repository of a scan.
type Repo struct {
	URL    string `json:"url"`
	Branch string `json:"branch"`
	Source string `json:"source"`
	// Identity names the repository for fingerprints when its URL does not:
	// an upload is "upload-content:" + the content hash of its files, so the
	// same code uploaded again is recognized. Empty means the URL.
	Identity string `json:"identity,omitempty"`
	// CommitSHA is the estimated commit. BaseBranch and BaseCommit are set
	// when the estimation entry is a pull request: only findings the change
	// from BaseCommit introduces are reported. PullRequest is its number on
	// the git host, 0 when not given.
	CommitSHA   string `json:"commit_sha,omitempty"`
	BaseBranch  string `json:"base_branch,omitempty"`
	BaseCommit  string `json:"base_commit,omitempty"`
	PullRequest int32  `json:"pull_request,omitempty"`
}

// Key is the repository's identity for findings.
func (r Repo) Key() string {
	if r.Identity != "" {
		return r.Identity
	}
	return r.URL
}

// Scan is a scan row.
type Scan struct {
	ID, OrgID, UserID, TaskID, EstimationID string
	Status                                  vocab.ScanStatus
	StartState                              StartState
	ScanType                                string
	Repos                                   []Repo
	TargetURLs                              []string
	AuthInstructionsEnc                     []byte
	CustomContext                           string
	ContextDocumentIDs                      []string
	Credits, Progress                       int32
	Error                                   *string
	CreatedAt, UpdatedAt                    time.Time
	StartedAt, CompletedAt                  *time.Time
}

// StartState is where a scan's start saga is: a scan is visible to its
// organization and runnable only once Started.
type StartState string

// Start saga states.
const (
	Starting StartState = "starting" // the saga runs; recovery may abort it
	Started  StartState = "started"  // claimed, debited and queued
	Aborting StartState = "aborting" // being undone; the request can no longer complete it
	Aborted  StartState = "aborted"  // undone: credits and claim given back
)

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

// collectScans reads every scan of rows.
func collectScans(rows pgx.Rows) ([]Scan, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Scan, error) { return scanScan(r) })
}

// Store runs the scan queries.
type Store struct {
	Pool *pgxpool.Pool
	// Ended, when set, runs in the transaction that moves a scan to
	// completed, failed or cancelled: it queues the scan's webhook event
	// (a River job), so the event is durable with the status change.
	Ended func(ctx context.Context, tx pgx.Tx, scanID string, status vocab.ScanStatus) error
}

// ended calls Ended, if set.
func (st *Store) ended(ctx context.Context, tx pgx.Tx, id string, status vocab.ScanStatus) error {
	if st.Ended == nil {
		return nil
	}
	if err := st.Ended(ctx, tx, id, status); err != nil {
		return fmt.Errorf("queue scan event: %w", err)
	}
	return nil
}

// InsertStarting records a scan whose start saga begins.
func (st *Store) InsertStarting(ctx context.Context, tx pgx.Tx, s Scan) error {
	repos, err := json.Marshal(s.Repos)
	if err != nil {
		return err
	}
	scanType := s.ScanType
	if scanType == "" {
		scanType = "full" // the column's default
	}
	_, err = tx.Exec(ctx, `INSERT INTO scan.scans (id, org_id, user_id, task_id, cost_estimation_id, repos, target_urls,
		auth_instructions_enc, custom_context, context_document_ids, credits, scan_type)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::uuid[], $11, $12)`,
		s.ID, s.OrgID, s.UserID, s.TaskID, s.EstimationID, repos, s.TargetURLs, s.AuthInstructionsEnc, s.CustomContext, db.UUIDArray(s.ContextDocumentIDs), s.Credits, scanType)
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

// List returns a page of the organization's started scans and their total,
// read in one snapshot and one round trip. Each sort order, with or
// without a status, has an index (migration 0003) that holds the page's
// order: the page's ids are read from it up to the page's end and only
// the page's rows from the table, and the total counts the organization's
// (or the status's) index entries.
func (st *Store) List(ctx context.Context, q ListQuery) ([]Scan, int32, error) {
	col, ok := sortColumns[q.SortBy]
	if !ok {
		return nil, 0, fmt.Errorf("bad sort column %q", q.SortBy)
	}
	countSQL, countArgs, pageSQL, pageArgs := listQueries(q, col)
	var total int32
	var out []Scan
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY`)
	b.Queue(countSQL, countArgs...).QueryRow(func(row pgx.Row) error { return row.Scan(&total) })
	b.Queue(pageSQL, pageArgs...).Query(func(rows pgx.Rows) error {
		var err error
		out, err = collectScans(rows)
		return err
	})
	b.Queue(`COMMIT`)
	// A batch that fails part way leaves its connection in the
	// transaction; the pool closes such a connection rather than reuse it.
	if err := st.Pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// listQueries renders List's total and page statements for sort column
// col. The status condition is present only when the list has one, so
// that each statement's plan, generic or not, reads the index of its own
// order.
func listQueries(q ListQuery, col string) (countSQL string, countArgs []any, pageSQL string, pageArgs []any) {
	dir := "DESC"
	if q.SortOrder == "ASC" {
		dir = "ASC"
	}
	where := `org_id = $1 AND start_state = 'started'`
	args := []any{q.OrgID}
	if q.Status != "" {
		where += ` AND status = $2`
		args = append(args, q.Status)
	}
	order := func(a string) string {
		return a + col + ` ` + dir + `, ` + a + `created_at ` + dir + `, ` + a + `id ` + dir
	}
	n := len(args)
	countSQL = `SELECT count(*) FROM scan.scans WHERE ` + where
	pageSQL = `SELECT ` + scanColumns + ` FROM (SELECT id FROM scan.scans WHERE ` + where + ` ORDER BY ` + order("") +
		` LIMIT $` + strconv.Itoa(n+1) + ` OFFSET $` + strconv.Itoa(n+2) + `) p JOIN scan.scans s USING (id) ORDER BY ` + order("s.")
	return countSQL, args, pageSQL, append(slices.Clone(args), q.Limit, int64(q.Page-1)*int64(q.Limit))
}

// ErrNotRunnable means the scan is no longer pending or running (it was
// cancelled or has ended), so no worker may run it.
var ErrNotRunnable = errors.New("scan is no longer pending or running")

// StartRunning marks the scan running if its organization has fewer than
// limit other scans running (limit 0: no bound), and reports whether it did.
// A scan that is no longer pending or running (cancelled or ended) is not
// started: ErrNotRunnable.
// The check and the update happen under a transaction-level advisory lock
// on the organization, so two workers cannot both take its last slot.
func (st *Store) StartRunning(ctx context.Context, id, orgID string, limit int) (bool, error) {
	started := false
	err := pgx.BeginFunc(ctx, st.Pool, func(tx pgx.Tx) error {
		if limit > 0 {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('scan.running:' || $1, 0))`, orgID); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM scan.scans WHERE org_id = $1 AND status = 'running' AND start_state = 'started' AND id <> $2`, orgID, id).Scan(&n); err != nil {
				return err
			}
			if n >= limit {
				return nil
			}
		}
		tag, err := tx.Exec(ctx, `UPDATE scan.scans SET status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
			WHERE id = $1 AND status IN ('pending', 'running')`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return ErrNotRunnable
		}
		started = true
		return nil
	})
	return started, err
}

// SetProgress records progress of a running scan; it never goes backwards.
func (st *Store) SetProgress(ctx context.Context, id string, p int32) error {
	_, err := st.Pool.Exec(ctx, `UPDATE scan.scans SET progress = greatest(progress, $2), updated_at = now() WHERE id = $1 AND status = 'running'`, id, p)
	return err
}

// Complete marks a running scan completed.
func (st *Store) Complete(ctx context.Context, id string) error {
	return db.InTx(ctx, st.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE scan.scans SET status = 'completed', progress = 100, completed_at = now(), updated_at = now()
			WHERE id = $1 AND status IN ('pending', 'running')`, id)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		return st.ended(ctx, tx, id, vocab.ScanCompleted)
	})
}

// Fail marks a scan failed with a message for the user.
func (st *Store) Fail(ctx context.Context, id, msg string) (bool, error) {
	failed := false
	err := db.InTx(ctx, st.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE scan.scans SET status = 'failed', error = $2, completed_at = now(), updated_at = now()
			WHERE id = $1 AND status IN ('pending', 'running')`, id, msg)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		failed = true
		return st.ended(ctx, tx, id, vocab.ScanFailed)
	})
	return failed && err == nil, err
}

// strandedSQL is Stranded's statement: it reads the unfinished scans
// (their own index, migration 0003) from the longest idle.
const strandedSQL = `SELECT ` + scanColumns + ` FROM scan.scans s
	WHERE s.start_state = 'started' AND s.status IN ('pending', 'running') AND s.updated_at < now() - $1::interval
	AND NOT EXISTS (SELECT 1 FROM scan.river_job j WHERE j.kind = 'run_scan' AND j.args->>'scan_id' = s.id::text
		AND j.state IN ('available', 'pending', 'running', 'retryable', 'scheduled'))
	ORDER BY s.updated_at LIMIT 100`

// Stranded returns started scans, not yet finished and idle for longer than
// idle, that no live River job will run any more.
func (st *Store) Stranded(ctx context.Context, idle time.Duration) ([]Scan, error) {
	rows, err := st.Pool.Query(ctx, strandedSQL, idle)
	if err != nil {
		return nil, err
	}
	return collectScans(rows)
}

// Document is a context document.
type Document struct {
	ID, OrgID, Name, Content string
	Size                     int32
	CreatedAt                time.Time
}

// DocumentQuota bounds an organization's context documents; zero fields
// do not bound.
type DocumentQuota struct {
	MaxCount int   // documents
	MaxSize  int64 // their sizes (characters) added up
}

// ErrQuota is returned when a write would exceed an organization's quota.
var ErrQuota = errors.New("quota exceeded")

// CreateDocument stores a context document within the organization's
// quota. The organization's documents are counted under a transaction-level
// advisory lock on the organization, so concurrent creations cannot both
// take the last place.
func (st *Store) CreateDocument(ctx context.Context, d Document, q DocumentQuota) (Document, error) {
	err := pgx.BeginFunc(ctx, st.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('scan.context_documents:' || $1, 0))`, d.OrgID); err != nil {
			return err
		}
		var n int
		var size int64
		if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(sum(size), 0) FROM scan.context_documents WHERE org_id = $1`, d.OrgID).Scan(&n, &size); err != nil {
			return err
		}
		if q.MaxCount > 0 && n+1 > q.MaxCount {
			return fmt.Errorf("%w: the organization already has %d context documents, the most allowed", ErrQuota, n)
		}
		if q.MaxSize > 0 && size+int64(d.Size) > q.MaxSize {
			return fmt.Errorf("%w: the organization's context documents would hold %d characters, more than the %d allowed", ErrQuota, size+int64(d.Size), q.MaxSize)
		}
		return tx.QueryRow(ctx, `INSERT INTO scan.context_documents (id, org_id, name, content, size) VALUES ($1, $2, $3, $4, $5) RETURNING created_at`,
			d.ID, d.OrgID, d.Name, d.Content, d.Size).Scan(&d.CreatedAt)
	})
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
		(SELECT 1 FROM scan.context_documents d WHERE d.id = x AND d.org_id = $1)`, orgID, db.UUIDArray(ids))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
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

// Schema is the Postgres schema the scan service owns; Migrate applies its migrations.
const Schema = "scan"

var Migrate = db.Migrations(Schema, migrations)

//go:embed migrations/*.sql
var migrations embed.FS
