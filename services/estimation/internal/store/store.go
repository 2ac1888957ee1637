// Package store is the estimation service's data layer over its own schema
// "estimation": uploads metadata, estimations with one row per repository,
// and the detection cache. River's job tables live in the same schema.
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

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/services/estimation/internal/detect"
)

// Errors the store reports.
var (
	ErrNotFound       = errors.New("not found")
	ErrClaimedByOther = errors.New("claimed by another scan")
	ErrNotReady       = errors.New("estimation not ready")
	ErrNoCredits      = errors.New("estimation has no credits")
)

// Store runs the estimation queries.
type Store struct {
	Pool *pgxpool.Pool
	// Ended, when set, runs in the transaction that gives an estimation
	// its terminal status: it queues the webhook event (a River job), so
	// the event is durable with the status.
	Ended func(ctx context.Context, tx pgx.Tx, id, orgID string, status vocab.EstimationStatus) error
}

type Upload struct {
	ID, OrgID, UserID, ContentType, SHA256, ContentHash, BlobKey string
	SizeBytes                                                    int64
	CreatedAt                                                    time.Time
}

type Repo struct {
	Position                           int
	Source, RepoURL, RequestedBranch   string
	Branch, CommitSHA, CloneURL, Error string
	Status                             vocab.EstimationStatus // pending, completed or failed
	FromCache                          bool
	Credits                            int
	Applications                       []detect.App
	// BaseBranch names the base of a pull request (PR) entry, empty for a
	// full one; RequestedBaseCommit pins it to a commit of that branch.
	// BaseCommit is the resolved base, ChangedFiles and ChangedLines the
	// size of the change from it to CommitSHA.
	BaseBranch, RequestedBaseCommit, BaseCommit string
	PullRequest                                 int
	ChangedFiles, ChangedLines                  int
}

// IsPR tells whether the entry is a pull request entry.
func (r Repo) IsPR() bool { return r.BaseBranch != "" }

type Estimation struct {
	ID, OrgID, UserID, Name, TaskID string
	Status                          vocab.EstimationStatus
	TotalCredits                    int
	ClaimedByScanID                 string
	CreatedAt, UpdatedAt            time.Time
	Repos                           []Repo
}

// CreateUpload records an upload.
func (s *Store) CreateUpload(ctx context.Context, u Upload, q UploadQuota) (Upload, error) {
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('estimation.uploads:' || $1, 0))`, u.OrgID); err != nil {
			return err
		}
		if err := q.check(ctx, tx, u.OrgID, u.SizeBytes); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO estimation.uploads (id, org_id, user_id, content_type, size_bytes, sha256, content_hash, blob_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING created_at`,
			u.ID, u.OrgID, u.UserID, u.ContentType, u.SizeBytes, u.SHA256, u.ContentHash, u.BlobKey).Scan(&u.CreatedAt)
	})
	if err != nil && !errors.Is(err, ErrQuota) {
		return u, fmt.Errorf("insert upload: %w", err)
	}
	return u, err
}

// UploadQuota bounds the uploads an organization keeps; zero fields do not
// bound.
type UploadQuota struct {
	MaxCount int
	MaxBytes int64
}

// ErrQuota is returned when a write would exceed an organization's quota;
// its message is safe to show.
var ErrQuota = errors.New("quota exceeded")

// CheckUploadQuota reports (with ErrQuota) whether one more upload of size
// bytes would exceed q. It takes no lock: CreateUpload checks again under
// one; this lets a request over quota be refused before it is processed.
func (s *Store) CheckUploadQuota(ctx context.Context, orgID string, size int64, q UploadQuota) error {
	return q.check(ctx, s.Pool, orgID, size)
}

func (q UploadQuota) check(ctx context.Context, dbq db.DBTX, orgID string, size int64) error {
	var n int
	var total int64
	if err := dbq.QueryRow(ctx, `SELECT count(*), coalesce(sum(size_bytes), 0) FROM estimation.uploads WHERE org_id = $1`, orgID).Scan(&n, &total); err != nil {
		return fmt.Errorf("count uploads: %w", err)
	}
	if q.MaxCount > 0 && n+1 > q.MaxCount {
		return fmt.Errorf("%w: the organization already keeps %d uploads, the most allowed; unused uploads are deleted after the retention period", ErrQuota, n)
	}
	if q.MaxBytes > 0 && total+size > q.MaxBytes {
		return fmt.Errorf("%w: the organization's uploads would take %d MiB, more than the %d MiB allowed; unused uploads are deleted after the retention period", ErrQuota, (total+size)>>20, q.MaxBytes>>20)
	}
	return nil
}

// expiredUploadsSQL lists up to $2 uploads older than $1 seconds that no
// estimation used within them, oldest first. It reads the uploads past
// the period in age order (uploads_created) and each one's uses by URL
// (estimation_repos_url, migration 0004), not both tables whole.
const expiredUploadsSQL = `SELECT u.id, u.org_id, u.blob_key FROM estimation.uploads u
	WHERE u.created_at < now() - make_interval(secs => $1)
	AND NOT EXISTS (SELECT 1 FROM estimation.estimation_repos r JOIN estimation.estimations e ON e.id = r.estimation_id
		WHERE r.repo_url = 'upload://' || u.id::text
		AND (e.status IN ('pending', 'running') OR e.updated_at > now() - make_interval(secs => $1) OR e.claimed_at > now() - make_interval(secs => $1)))
	ORDER BY u.created_at LIMIT $2`

// ExpiredUploads lists up to limit uploads older than retention that no
// estimation has used within retention: none still pending or running,
// none updated or claimed by a scan since. Scans read an upload through
// their estimation soon after claiming it, so a claim within the period
// keeps the upload.
func (s *Store) ExpiredUploads(ctx context.Context, retention time.Duration, limit int) ([]Upload, error) {
	rows, err := s.Pool.Query(ctx, expiredUploadsSQL, retention.Seconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("list expired uploads: %w", err)
	}
	defer rows.Close()
	var out []Upload
	for rows.Next() {
		var u Upload
		if err := rows.Scan(&u.ID, &u.OrgID, &u.BlobKey); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// DeleteUpload removes an upload's row.
func (s *Store) DeleteUpload(ctx context.Context, id string) error {
	_, err := s.Pool.Exec(ctx, `DELETE FROM estimation.uploads WHERE id = $1`, id)
	return err
}

// runningSQL counts the organization's running estimations other than
// one, through their own index (migration 0003).
const runningSQL = `SELECT count(*) FROM estimation.estimations WHERE org_id = $1 AND status = 'running' AND id <> $2`

// StartRunning marks a pending estimation running if its organization has
// fewer than limit other estimations running (0: no bound) and reports
// whether the estimation may run. The count and the update happen under a
// transaction-level advisory lock on the organization.
func (s *Store) StartRunning(ctx context.Context, id, orgID string, limit int) (bool, error) {
	ok := false
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if limit > 0 {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('estimation.running:' || $1, 0))`, orgID); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, runningSQL, orgID, id).Scan(&n); err != nil {
				return err
			}
			if n >= limit {
				return nil
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE estimation.estimations SET status = 'running', updated_at = now() WHERE id = $1 AND status = 'pending'`, id); err != nil {
			return err
		}
		ok = true
		return nil
	})
	return ok, err
}

// GetUpload reads an upload of org.
func (s *Store) GetUpload(ctx context.Context, q db.DBTX, orgID, id string) (Upload, error) {
	if q == nil {
		q = s.Pool
	}
	var u Upload
	err := q.QueryRow(ctx, `SELECT id, org_id, user_id, content_type, size_bytes, sha256, content_hash, blob_key, created_at
		FROM estimation.uploads WHERE id = $1 AND org_id = $2`, id, orgID).
		Scan(&u.ID, &u.OrgID, &u.UserID, &u.ContentType, &u.SizeBytes, &u.SHA256, &u.ContentHash, &u.BlobKey, &u.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return u, ErrNotFound
	}
	if err != nil {
		return u, fmt.Errorf("read upload: %w", err)
	}
	return u, nil
}

// UploadsExist returns which of ids are uploads of org.
func (s *Store) UploadsExist(ctx context.Context, orgID string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.Pool.Query(ctx, `SELECT id::text FROM estimation.uploads WHERE org_id = $1 AND id = ANY($2::uuid[])`, orgID, db.UUIDArray(ids))
	if err != nil {
		return nil, fmt.Errorf("read uploads: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// CreateEstimation inserts an estimation with its repositories in tx; the
// caller enqueues the job in the same transaction.
func (s *Store) CreateEstimation(ctx context.Context, tx pgx.Tx, e Estimation) (Estimation, error) {
	err := tx.QueryRow(ctx, `INSERT INTO estimation.estimations (id, org_id, user_id, name, status) VALUES ($1, $2, $3, $4, 'pending')
		RETURNING status, created_at, updated_at`, e.ID, e.OrgID, e.UserID, e.Name).Scan(&e.Status, &e.CreatedAt, &e.UpdatedAt)
	if err != nil {
		return e, fmt.Errorf("insert estimation: %w", err)
	}
	for i := range e.Repos {
		r := &e.Repos[i]
		r.Position, r.Status = i, vocab.EstimationPending
		if _, err := tx.Exec(ctx, `INSERT INTO estimation.estimation_repos (estimation_id, position, source, repo_url, requested_branch, branch,
			base_branch, requested_base_commit, pull_request)
			VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8)`, e.ID, i, r.Source, r.RepoURL, r.RequestedBranch,
			r.BaseBranch, r.RequestedBaseCommit, r.PullRequest); err != nil {
			return e, fmt.Errorf("insert estimation repo: %w", err)
		}
	}
	return e, nil
}

// SetTaskID records the job's identifier.
func (s *Store) SetTaskID(ctx context.Context, tx pgx.Tx, id, taskID string) error {
	_, err := tx.Exec(ctx, `UPDATE estimation.estimations SET task_id = $2 WHERE id = $1`, id, taskID)
	return err
}

const estCols = `id, org_id, user_id, name, task_id, status, total_credits, coalesce(claimed_by_scan_id::text, ''), created_at, updated_at`

func scanEst(row pgx.Row, e *Estimation) error {
	return row.Scan(&e.ID, &e.OrgID, &e.UserID, &e.Name, &e.TaskID, &e.Status, &e.TotalCredits, &e.ClaimedByScanID, &e.CreatedAt, &e.UpdatedAt)
}

// GetEstimation reads an estimation of org (any org when orgID is "") with its repositories.
func (s *Store) GetEstimation(ctx context.Context, orgID, id string) (Estimation, error) {
	var e Estimation
	err := scanEst(s.Pool.QueryRow(ctx, `SELECT `+estCols+` FROM estimation.estimations WHERE id = $1 AND ($2 = '' OR org_id::text = $2)`, id, orgID), &e)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, ErrNotFound
	}
	if err != nil {
		return e, fmt.Errorf("read estimation: %w", err)
	}
	if err := s.loadRepos(ctx, []*Estimation{&e}); err != nil {
		return e, err
	}
	return e, nil
}

func (s *Store) loadRepos(ctx context.Context, es []*Estimation) error {
	if len(es) == 0 {
		return nil
	}
	ids := make([]string, len(es))
	byID := map[string]*Estimation{}
	for i, e := range es {
		ids[i] = e.ID
		byID[e.ID] = e
		e.Repos = []Repo{}
	}
	rows, err := s.Pool.Query(ctx, `SELECT estimation_id::text, position, source, repo_url, requested_branch, branch, commit_sha, clone_url, status, from_cache, credits, applications, error,
		base_branch, requested_base_commit, base_commit, pull_request, changed_files, changed_lines
		FROM estimation.estimation_repos WHERE estimation_id = ANY($1::uuid[]) ORDER BY estimation_id, position`, db.UUIDArray(ids))
	if err != nil {
		return fmt.Errorf("read estimation repos: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var r Repo
		var apps []byte
		if err := rows.Scan(&id, &r.Position, &r.Source, &r.RepoURL, &r.RequestedBranch, &r.Branch, &r.CommitSHA, &r.CloneURL, &r.Status, &r.FromCache, &r.Credits, &apps, &r.Error,
			&r.BaseBranch, &r.RequestedBaseCommit, &r.BaseCommit, &r.PullRequest, &r.ChangedFiles, &r.ChangedLines); err != nil {
			return err
		}
		if err := json.Unmarshal(apps, &r.Applications); err != nil {
			return fmt.Errorf("decode applications: %w", err)
		}
		byID[id].Repos = append(byID[id].Repos, r)
	}
	return rows.Err()
}

// ListEstimations lists org's estimations, most recent first, with the total.
func (s *Store) ListEstimations(ctx context.Context, orgID string, limit, offset int) ([]Estimation, int, error) {
	var total int
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM estimation.estimations WHERE org_id = $1`, orgID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count estimations: %w", err)
	}
	rows, err := s.Pool.Query(ctx, `SELECT `+estCols+` FROM estimation.estimations WHERE org_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, orgID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list estimations: %w", err)
	}
	var out []Estimation
	for rows.Next() {
		var e Estimation
		if err := scanEst(rows, &e); err != nil {
			rows.Close()
			return nil, 0, err
		}
		out = append(out, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	ptrs := make([]*Estimation, len(out))
	for i := range out {
		ptrs[i] = &out[i]
	}
	return out, total, s.loadRepos(ctx, ptrs)
}

// MarkRunning moves a pending estimation to running.
func (s *Store) MarkRunning(ctx context.Context, id string) error {
	_, err := s.Pool.Exec(ctx, `UPDATE estimation.estimations SET status = 'running', updated_at = now() WHERE id = $1 AND status = 'pending'`, id)
	return err
}

// SaveRepoResult records the outcome of one repository of a non-terminal
// estimation; results of a terminal estimation never change.
func (s *Store) SaveRepoResult(ctx context.Context, id string, r Repo) error {
	apps, err := json.Marshal(r.Applications)
	if err != nil {
		return err
	}
	if r.Applications == nil {
		apps = []byte("[]")
	}
	_, err = s.Pool.Exec(ctx, `UPDATE estimation.estimation_repos SET branch = $3, commit_sha = $4, clone_url = $5, status = $6, from_cache = $7,
		credits = $8, applications = $9, error = $10, base_commit = $11, changed_files = $12, changed_lines = $13
		WHERE estimation_id = $1 AND position = $2 AND status = 'pending'
		  AND EXISTS (SELECT 1 FROM estimation.estimations WHERE id = $1 AND status IN ('pending', 'running'))`,
		id, r.Position, r.Branch, r.CommitSHA, r.CloneURL, r.Status, r.FromCache, r.Credits, apps, r.Error,
		r.BaseCommit, r.ChangedFiles, r.ChangedLines)
	if err != nil {
		return fmt.Errorf("save repo result: %w", err)
	}
	return nil
}

// FailPending marks every pending repository of a non-terminal estimation failed.
func (s *Store) FailPending(ctx context.Context, id, msg string) error {
	_, err := s.Pool.Exec(ctx, `UPDATE estimation.estimation_repos SET status = 'failed', error = $2
		WHERE estimation_id = $1 AND status = 'pending'
		  AND EXISTS (SELECT 1 FROM estimation.estimations WHERE id = $1 AND status IN ('pending', 'running'))`, id, msg)
	return err
}

// Finish computes the terminal status and total from the repositories, once.
func (s *Store) Finish(ctx context.Context, id string) error {
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error { return s.finish(ctx, tx, id) })
}

func (s *Store) finish(ctx context.Context, tx pgx.Tx, id string) error {
	var status vocab.EstimationStatus
	var orgID string
	err := tx.QueryRow(ctx, `UPDATE estimation.estimations e SET
		status = CASE WHEN r.pending > 0 THEN e.status WHEN r.failed = 0 THEN 'completed' WHEN r.completed = 0 THEN 'failed' ELSE 'partial' END,
		total_credits = r.credits, updated_at = now()
		FROM (SELECT count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'failed') AS failed,
		             count(*) FILTER (WHERE status = 'completed') AS completed, coalesce(sum(credits) FILTER (WHERE status = 'completed'), 0) AS credits
		      FROM estimation.estimation_repos WHERE estimation_id = $1) r
		WHERE e.id = $1 AND e.status IN ('pending', 'running') AND r.pending = 0 RETURNING e.status, e.org_id::text`, id).Scan(&status, &orgID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // still running, or finished before
	}
	if err != nil {
		return fmt.Errorf("finish estimation: %w", err)
	}
	if s.Ended != nil && status.Terminal() {
		if err := s.Ended(ctx, tx, id, orgID, status); err != nil {
			return fmt.Errorf("queue estimation event: %w", err)
		}
	}
	return nil
}

// strandedSQL is Stranded's statement: it reads the unfinished
// estimations (their own index, migration 0003) from the longest idle.
const strandedSQL = `SELECT e.id::text FROM estimation.estimations e
	WHERE e.status IN ('pending', 'running') AND e.updated_at < now() - $1::interval
	AND NOT EXISTS (SELECT 1 FROM estimation.river_job j WHERE j.kind = 'estimate' AND j.args->>'estimation_id' = e.id::text
		AND j.state IN ('available', 'pending', 'running', 'retryable', 'scheduled'))
	ORDER BY e.updated_at LIMIT 100`

// Stranded returns estimations, not yet terminal and idle for longer than
// idle, that no live River job will run any more (River discards the job of
// a process that died on its last attempt without running it again).
func (s *Store) Stranded(ctx context.Context, idle time.Duration) ([]string, error) {
	rows, err := s.Pool.Query(ctx, strandedSQL, idle)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// CachedResult reads a detection result by repository and commit.
func (s *Store) CachedResult(ctx context.Context, repoKey, commit string) (*detect.Result, error) {
	var b []byte
	err := s.Pool.QueryRow(ctx, `SELECT result FROM estimation.detection_cache WHERE repo_key = $1 AND commit_sha = $2`, repoKey, commit).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read detection cache: %w", err)
	}
	var r detect.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode detection cache: %w", err)
	}
	return &r, nil
}

// CacheResult stores a detection result; the first one for a commit wins.
func (s *Store) CacheResult(ctx context.Context, repoKey, commit string, r detect.Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = s.Pool.Exec(ctx, `INSERT INTO estimation.detection_cache (repo_key, commit_sha, result) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, repoKey, commit, b)
	if err != nil {
		return fmt.Errorf("write detection cache: %w", err)
	}
	return nil
}

// Claim gives the estimation to scanID if nobody holds it and it is ready.
// It reports whether the claim is new (false when scanID already held it).
func (s *Store) Claim(ctx context.Context, orgID, id, scanID string) (bool, error) {
	tag, err := s.Pool.Exec(ctx, `UPDATE estimation.estimations SET claimed_by_scan_id = $3, claimed_at = now()
		WHERE id = $1 AND org_id = $2 AND claimed_by_scan_id IS NULL AND status IN ('completed', 'partial') AND total_credits > 0`, id, orgID, scanID)
	if err != nil {
		return false, fmt.Errorf("claim estimation: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	var e Estimation
	err = scanEst(s.Pool.QueryRow(ctx, `SELECT `+estCols+` FROM estimation.estimations WHERE id = $1 AND org_id = $2`, id, orgID), &e)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, ErrNotFound
	case err != nil:
		return false, fmt.Errorf("read estimation: %w", err)
	case e.ClaimedByScanID == scanID:
		return false, nil
	case e.ClaimedByScanID != "":
		return false, ErrClaimedByOther
	case !e.Status.Terminal():
		return false, ErrNotReady
	default:
		return false, ErrNoCredits
	}
}

// Release drops scanID's claim; it reports whether there was one.
func (s *Store) Release(ctx context.Context, orgID, id, scanID string) (bool, error) {
	tag, err := s.Pool.Exec(ctx, `UPDATE estimation.estimations SET claimed_by_scan_id = NULL, claimed_at = NULL
		WHERE id = $1 AND org_id = $2 AND claimed_by_scan_id = $3`, id, orgID, scanID)
	if err != nil {
		return false, fmt.Errorf("release estimation: %w", err)
	}
	if tag.RowsAffected() == 0 {
		var one int
		if err := s.Pool.QueryRow(ctx, `SELECT 1 FROM estimation.estimations WHERE id = $1 AND org_id = $2`, id, orgID).Scan(&one); errors.Is(err, pgx.ErrNoRows) {
			return false, ErrNotFound
		}
	}
	return tag.RowsAffected() == 1, nil
}

// Schema is the Postgres schema the estimation service owns; Migrate applies its migrations.
const Schema = "estimation"

var Migrate = db.Migrations(Schema, migrations)

//go:embed migrations/*.sql
var migrations embed.FS
