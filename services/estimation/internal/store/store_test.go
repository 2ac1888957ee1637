package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/boot"
	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/services/estimation/internal/detect"
)

// migrate applies what the service applies at start: the estimation
// tables and River's.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if err := Migrate(ctx, pool); err != nil {
		return err
	}
	return boot.Queue(Schema)(ctx, pool)
}

func setup(t *testing.T) (*Store, Estimation) {
	t.Helper()
	pool := dbtest.Migrated(t, "estimation_store", migrate)
	ctx := context.Background()
	s := &Store{Pool: pool}
	e := Estimation{ID: uuid.NewString(), OrgID: uuid.NewString(), UserID: uuid.NewString(), Name: "n",
		Repos: []Repo{{Source: "public", RepoURL: "https://a/b"}, {Source: "public", RepoURL: "https://a/c"}}}
	require.NoError(t, db.InTx(ctx, pool, func(tx pgx.Tx) error {
		var err error
		e, err = s.CreateEstimation(ctx, tx, e)
		return err
	}))
	return s, e
}

func TestFinishAndImmutability(t *testing.T) {
	t.Parallel()
	s, e := setup(t)
	ctx := context.Background()
	require.NoError(t, s.MarkRunning(ctx, e.ID))
	require.NoError(t, s.SaveRepoResult(ctx, e.ID, Repo{Position: 0, Status: vocab.EstimationCompleted, Credits: 3, Applications: []detect.App{{Name: "a", Root: "."}}}))
	require.NoError(t, s.Finish(ctx, e.ID)) // one repo still pending: no change
	got, err := s.GetEstimation(ctx, e.OrgID, e.ID)
	require.NoError(t, err)
	require.Equal(t, vocab.EstimationRunning, got.Status)
	require.NoError(t, s.SaveRepoResult(ctx, e.ID, Repo{Position: 1, Status: vocab.EstimationFailed, Error: "boom"}))
	require.NoError(t, s.Finish(ctx, e.ID))
	got, err = s.GetEstimation(ctx, e.OrgID, e.ID)
	require.NoError(t, err)
	require.Equal(t, vocab.EstimationPartial, got.Status)
	require.Equal(t, 3, got.TotalCredits)

	// Terminal: results and status never change again.
	require.NoError(t, s.SaveRepoResult(ctx, e.ID, Repo{Position: 1, Status: vocab.EstimationCompleted, Credits: 9}))
	require.NoError(t, s.FailPending(ctx, e.ID, "x"))
	require.NoError(t, s.Finish(ctx, e.ID))
	again, err := s.GetEstimation(ctx, e.OrgID, e.ID)
	require.NoError(t, err)
	require.Equal(t, got, again)

	_, err = s.GetEstimation(ctx, uuid.NewString(), e.ID)
	require.ErrorIs(t, err, ErrNotFound)
}

func TestClaimRelease(t *testing.T) {
	t.Parallel()
	s, e := setup(t)
	ctx := context.Background()
	a, b := uuid.NewString(), uuid.NewString()
	_, err := s.Claim(ctx, e.OrgID, e.ID, a)
	require.ErrorIs(t, err, ErrNotReady)
	require.NoError(t, s.SaveRepoResult(ctx, e.ID, Repo{Position: 0, Status: vocab.EstimationCompleted, Credits: 2}))
	require.NoError(t, s.SaveRepoResult(ctx, e.ID, Repo{Position: 1, Status: vocab.EstimationCompleted, Credits: 0}))
	require.NoError(t, s.Finish(ctx, e.ID))

	fresh, err := s.Claim(ctx, e.OrgID, e.ID, a)
	require.NoError(t, err)
	require.True(t, fresh)
	fresh, err = s.Claim(ctx, e.OrgID, e.ID, a)
	require.NoError(t, err)
	require.False(t, fresh)
	_, err = s.Claim(ctx, e.OrgID, e.ID, b)
	require.ErrorIs(t, err, ErrClaimedByOther)
	ok, err := s.Release(ctx, e.OrgID, e.ID, b)
	require.NoError(t, err)
	require.False(t, ok)
	ok, err = s.Release(ctx, e.OrgID, e.ID, a)
	require.NoError(t, err)
	require.True(t, ok)
	_, err = s.Claim(ctx, uuid.NewString(), e.ID, b)
	require.ErrorIs(t, err, ErrNotFound)
	fresh, err = s.Claim(ctx, e.OrgID, e.ID, b)
	require.NoError(t, err)
	require.True(t, fresh)
}

func TestCache(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	r, err := s.CachedResult(ctx, "https://a/b", "abc")
	require.NoError(t, err)
	require.Nil(t, r)
	require.NoError(t, s.CacheResult(ctx, "https://a/b", "abc", detect.Result{Credits: 4, Apps: []detect.App{{Name: "x", Root: ".", Credits: 4}}}))
	require.NoError(t, s.CacheResult(ctx, "https://a/b", "abc", detect.Result{Credits: 9}))
	r, err = s.CachedResult(ctx, "https://a/b", "abc")
	require.NoError(t, err)
	require.Equal(t, 4, r.Credits)
}

func TestStranded(t *testing.T) {
	t.Parallel()
	s, stranded := setup(t)
	ctx := context.Background()
	// A second estimation whose job is still queued.
	queued := Estimation{ID: uuid.NewString(), OrgID: stranded.OrgID, UserID: stranded.UserID, Name: "q",
		Repos: []Repo{{Source: "public", RepoURL: "https://a/d"}}}
	require.NoError(t, db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		queued, err = s.CreateEstimation(ctx, tx, queued)
		return err
	}))
	rc, err := river.NewClient(riverpgxv5.New(s.Pool), &river.Config{Schema: Schema})
	require.NoError(t, err)
	_, err = rc.Insert(ctx, estimateArgs{ID: queued.ID}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)

	ids, err := s.Stranded(ctx, time.Minute)
	require.NoError(t, err)
	require.Empty(t, ids, "fresh estimations are not stranded yet")
	_, err = s.Pool.Exec(ctx, `UPDATE estimation.estimations SET updated_at = now() - interval '10 minutes'`)
	require.NoError(t, err)
	ids, err = s.Stranded(ctx, time.Minute)
	require.NoError(t, err)
	require.Equal(t, []string{stranded.ID}, ids, "only the estimation without a live job")

	// Ending it makes it terminal and no longer stranded.
	require.NoError(t, s.FailPending(ctx, stranded.ID, "internal error"))
	require.NoError(t, s.Finish(ctx, stranded.ID))
	e, err := s.GetEstimation(ctx, "", stranded.ID)
	require.NoError(t, err)
	require.Equal(t, vocab.EstimationFailed, e.Status)
	ids, err = s.Stranded(ctx, time.Minute)
	require.NoError(t, err)
	require.Empty(t, ids)
}

// estimateArgs mirrors the service's job arguments (kind "estimate").
type estimateArgs struct {
	ID string `json:"estimation_id"`
}

func (estimateArgs) Kind() string { return "estimate" }

// TestStartRunningPerOrg: an organization runs at most limit estimations at
// once; a retried job of a running estimation is not counted against
// itself; other organizations are not held back.
func TestStartRunningPerOrg(t *testing.T) {
	t.Parallel()
	s, first := setup(t)
	ctx := context.Background()
	mk := func(orgID string) Estimation {
		e := Estimation{ID: uuid.NewString(), OrgID: orgID, UserID: uuid.NewString(), Name: "n", Repos: []Repo{{Source: "public", RepoURL: "https://a/b"}}}
		require.NoError(t, db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
			var err error
			e, err = s.CreateEstimation(ctx, tx, e)
			return err
		}))
		return e
	}
	second, third, other := mk(first.OrgID), mk(first.OrgID), mk(uuid.NewString())
	for _, tc := range []struct {
		e    Estimation
		want bool
	}{{first, true}, {second, true}, {third, false}, {first, true}, {other, true}} {
		ok, err := s.StartRunning(ctx, tc.e.ID, tc.e.OrgID, 2)
		require.NoError(t, err)
		require.Equal(t, tc.want, ok, tc.e.ID)
	}
	got, err := s.GetEstimation(ctx, third.OrgID, third.ID)
	require.NoError(t, err)
	require.Equal(t, vocab.EstimationPending, got.Status)
	require.NoError(t, s.FailPending(ctx, first.ID, "x"))
	require.NoError(t, s.Finish(ctx, first.ID))
	ok, err := s.StartRunning(ctx, third.ID, third.OrgID, 2)
	require.NoError(t, err)
	require.True(t, ok, "a finished estimation frees its slot")
}

// TestUploadQuotaAndRetention: the quota holds under concurrent uploads,
// and only uploads unused for the retention period expire.
func TestUploadQuotaAndRetention(t *testing.T) {
	t.Parallel()
	s, e := setup(t)
	ctx := context.Background()
	q := UploadQuota{MaxCount: 3, MaxBytes: 1000}
	newUpload := func(orgID string, size int64) Upload {
		id := uuid.NewString()
		return Upload{ID: id, OrgID: orgID, UserID: uuid.NewString(), ContentType: "application/zip", SizeBytes: size, SHA256: "s", ContentHash: "c", BlobKey: "uploads/" + id}
	}
	org := uuid.NewString()
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func() { _, err := s.CreateUpload(ctx, newUpload(org, 10), q); errs <- err }()
	}
	var ok, refused int
	for i := 0; i < 6; i++ {
		err := <-errs
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrQuota):
			refused++
		default:
			t.Fatal(err)
		}
	}
	require.Equal(t, 3, ok)
	require.Equal(t, 3, refused)
	_, err := s.CreateUpload(ctx, newUpload(uuid.NewString(), 1001), q)
	require.ErrorIs(t, err, ErrQuota)
	require.ErrorContains(t, err, "more than the 0 MiB allowed")

	// Retention: an old upload no estimation used expires; an old one used
	// by a recent estimation does not; a new one does not.
	oldUnused, _ := s.CreateUpload(ctx, newUpload(e.OrgID, 1), UploadQuota{})
	oldUsed, _ := s.CreateUpload(ctx, newUpload(e.OrgID, 1), UploadQuota{})
	fresh, _ := s.CreateUpload(ctx, newUpload(e.OrgID, 1), UploadQuota{})
	_, err = s.Pool.Exec(ctx, `UPDATE estimation.uploads SET created_at = now() - interval '40 days' WHERE id = ANY($1)`, []string{oldUnused.ID, oldUsed.ID})
	require.NoError(t, err)
	_, err = s.Pool.Exec(ctx, `UPDATE estimation.estimation_repos SET repo_url = $2 WHERE estimation_id = $1 AND position = 0`, e.ID, "upload://"+oldUsed.ID)
	require.NoError(t, err)
	expired, err := s.ExpiredUploads(ctx, 30*24*time.Hour, 100)
	require.NoError(t, err)
	var ids []string
	for _, u := range expired {
		ids = append(ids, u.ID)
	}
	require.Contains(t, ids, oldUnused.ID)
	require.NotContains(t, ids, oldUsed.ID)
	require.NotContains(t, ids, fresh.ID)
	// Once the estimation has been idle for the period, its upload expires too.
	_, err = s.Pool.Exec(ctx, `UPDATE estimation.estimations SET status = 'completed', updated_at = now() - interval '31 days' WHERE id = $1`, e.ID)
	require.NoError(t, err)
	expired, err = s.ExpiredUploads(ctx, 30*24*time.Hour, 100)
	require.NoError(t, err)
	ids = ids[:0]
	for _, u := range expired {
		ids = append(ids, u.ID)
	}
	require.Contains(t, ids, oldUsed.ID)
	require.NoError(t, s.DeleteUpload(ctx, oldUnused.ID))
	_, err = s.GetUpload(ctx, nil, e.OrgID, oldUnused.ID)
	require.ErrorIs(t, err, ErrNotFound)
}

// TestEstimationsAndUploads: an estimation is created pending with its
// repositories in order and its task id, read and listed only by its
// organization, newest first; uploads are the organization's own, and the
// unlocked quota check answers like the locked one.
func TestEstimationsAndUploads(t *testing.T) {
	t.Parallel()
	s, e := setup(t)
	ctx := context.Background()
	require.Equal(t, vocab.EstimationPending, e.Status)
	require.NoError(t, db.InTx(ctx, s.Pool, func(tx pgx.Tx) error { return s.SetTaskID(ctx, tx, e.ID, "estimate-42") }))
	got, err := s.GetEstimation(ctx, e.OrgID, e.ID)
	require.NoError(t, err)
	require.Equal(t, "estimate-42", got.TaskID)
	require.Len(t, got.Repos, 2)
	require.Equal(t, []string{"https://a/b", "https://a/c"}, []string{got.Repos[0].RepoURL, got.Repos[1].RepoURL})
	for _, r := range got.Repos {
		require.Equal(t, vocab.EstimationPending, r.Status)
	}

	later := Estimation{ID: uuid.NewString(), OrgID: e.OrgID, UserID: e.UserID, Name: "later", Repos: []Repo{{Source: "public", RepoURL: "https://a/d"}}}
	require.NoError(t, db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		later, err = s.CreateEstimation(ctx, tx, later)
		return err
	}))
	_, err = s.Pool.Exec(ctx, `UPDATE estimation.estimations SET created_at = now() - interval '1 hour' WHERE id = $1`, e.ID)
	require.NoError(t, err)
	list, total, err := s.ListEstimations(ctx, e.OrgID, 1, 0)
	require.NoError(t, err)
	require.Equal(t, 2, total)
	require.Len(t, list, 1)
	require.Equal(t, later.ID, list[0].ID, "newest first")
	require.Len(t, list[0].Repos, 1)
	list, _, err = s.ListEstimations(ctx, e.OrgID, 10, 1)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, e.ID, list[0].ID)
	list, total, err = s.ListEstimations(ctx, uuid.NewString(), 10, 0)
	require.NoError(t, err)
	require.Zero(t, total)
	require.Empty(t, list)

	org := uuid.NewString()
	u, err := s.CreateUpload(ctx, Upload{ID: uuid.NewString(), OrgID: org, UserID: uuid.NewString(), ContentType: "application/zip",
		SizeBytes: 600, SHA256: "s", ContentHash: "c", BlobKey: "uploads/x"}, UploadQuota{})
	require.NoError(t, err)
	require.False(t, u.CreatedAt.IsZero())
	read, err := s.GetUpload(ctx, nil, org, u.ID)
	require.NoError(t, err)
	require.Equal(t, int64(600), read.SizeBytes)
	_, err = s.GetUpload(ctx, nil, uuid.NewString(), u.ID)
	require.ErrorIs(t, err, ErrNotFound, "another organization's upload")
	unknown := uuid.NewString()
	exist, err := s.UploadsExist(ctx, org, []string{u.ID, unknown})
	require.NoError(t, err)
	require.True(t, exist[u.ID])
	require.False(t, exist[unknown])

	require.NoError(t, s.CheckUploadQuota(ctx, org, 400, UploadQuota{MaxCount: 2, MaxBytes: 1000}))
	require.ErrorIs(t, s.CheckUploadQuota(ctx, org, 401, UploadQuota{MaxCount: 2, MaxBytes: 1000}), ErrQuota)
	require.ErrorIs(t, s.CheckUploadQuota(ctx, org, 1, UploadQuota{MaxCount: 1, MaxBytes: 1000}), ErrQuota)
}

// TestUnfinishedLookupsReadOnlyUnfinished: with either plan, a start's
// count of its organization's running estimations and the stranded sweep
// read the unfinished estimations alone, among thousands of finished ones
// (before migration 0003 they read every estimation of the organization,
// or of every organization).
func TestUnfinishedLookupsReadOnlyUnfinished(t *testing.T) {
	t.Parallel()
	s, e := setup(t)
	ctx := context.Background()
	_, err := s.Pool.Exec(ctx, `INSERT INTO estimation.estimations (id, org_id, user_id, name, status, updated_at)
		SELECT gen_random_uuid(), CASE WHEN i % 2 = 0 THEN $1::uuid ELSE gen_random_uuid() END, gen_random_uuid(), 'n',
			CASE WHEN i % 500 = 0 THEN 'running' ELSE 'completed' END, now() - interval '1 hour'
		FROM generate_series(1, 4000) i`, e.OrgID)
	require.NoError(t, err)
	_, err = s.Pool.Exec(ctx, `VACUUM ANALYZE estimation.estimations`)
	require.NoError(t, err)
	var unfinished, ownRunning int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status IN ('pending', 'running')),
		count(*) FILTER (WHERE status = 'running' AND org_id = $1) FROM estimation.estimations`, e.OrgID).Scan(&unfinished, &ownRunning))
	require.Equal(t, 8, ownRunning)
	for _, mode := range dbtest.PlanModes {
		t.Run(mode, func(t *testing.T) {
			p := dbtest.Prepare(t, s.Pool, nil, mode, "running", "uuid, uuid", runningSQL, e.OrgID, e.ID)
			// Each running estimation read at most twice: its index entry
			// and its row.
			require.LessOrEqual(t, dbtest.RowsRead(p.Explain(), "estimations", true), float64(2*ownRunning), "estimations read by the running count")
			p = dbtest.Prepare(t, s.Pool, nil, mode, "stranded", "interval", strandedSQL, "5 minutes")
			require.LessOrEqual(t, dbtest.RowsRead(p.Explain(), "estimations", true), float64(2*unfinished), "estimations read by the sweep")
		})
	}
	ok, err := s.StartRunning(ctx, e.ID, e.OrgID, 8)
	require.NoError(t, err)
	require.False(t, ok, "eight running already")
}

// TestExpiredUploadsReadTheirIndexes: the hourly purge's lookup reads the
// uploads past the retention period in age order and each one's uses by
// URL, under both plans, rather than every upload and every estimation's
// repositories, and still returns the oldest unused uploads.
func TestExpiredUploadsReadTheirIndexes(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	// 3,400 recent uploads and 600 past the period, one in three of those
	// used by an estimation updated today; 4,000 idle estimations of
	// public repositories.
	_, err := s.Pool.Exec(ctx, `
		INSERT INTO estimation.uploads (id, org_id, user_id, content_type, size_bytes, sha256, content_hash, blob_key, created_at)
			SELECT md5('u' || g)::uuid, md5('org')::uuid, md5('user')::uuid, 'application/zip', 1, 's', 'c', 'uploads/' || g,
				CASE WHEN g < 600 THEN now() - interval '40 days' - g * interval '1 minute' ELSE now() - g * interval '1 second' END
			FROM generate_series(0, 3999) g;
		INSERT INTO estimation.estimations (id, org_id, user_id, name, status, updated_at)
			SELECT md5('e' || g)::uuid, md5('org')::uuid, md5('user')::uuid, 'n', 'completed',
				CASE WHEN g < 600 THEN now() ELSE now() - interval '60 days' END
			FROM generate_series(0, 4199) g;
		INSERT INTO estimation.estimation_repos (estimation_id, position, source, repo_url)
			SELECT md5('e' || g)::uuid, 0, CASE WHEN g < 600 THEN 'upload' ELSE 'public' END,
				CASE WHEN g < 600 THEN 'upload://' || md5('u' || g)::uuid ELSE 'https://git.example.com/acme/r' || g END
			FROM generate_series(0, 4199) g WHERE g >= 600 OR g % 3 = 0;
		ANALYZE estimation.uploads, estimation.estimations, estimation.estimation_repos`)
	require.NoError(t, err)
	var want []string // the 100 oldest unused: the old uploads not a multiple of 3, oldest (largest g) first
	for g := 599; len(want) < 100; g-- {
		if g%3 != 0 {
			var id string
			require.NoError(t, s.Pool.QueryRow(ctx, `SELECT md5('u' || $1::int)::uuid::text`, g).Scan(&id))
			want = append(want, id)
		}
	}
	expired, err := s.ExpiredUploads(ctx, 30*24*time.Hour, 100)
	require.NoError(t, err)
	var got []string
	for _, u := range expired {
		got = append(got, u.ID)
	}
	require.Equal(t, want, got)
	for _, mode := range dbtest.PlanModes {
		p := dbtest.Prepare(t, s.Pool, nil, mode, "expired_uploads", "float8, int", expiredUploadsSQL, (30 * 24 * time.Hour).Seconds(), 100)
		plan := p.Explain()
		// The 150 oldest uploads hold the 100 unused ones; each has at most
		// one use.
		require.LessOrEqual(t, dbtest.RowsRead(plan, "uploads", true), 200.0, "%s: uploads read", mode)
		require.LessOrEqual(t, dbtest.RowsRead(plan, "estimation_repos", true), 200.0, "%s: estimation repositories read", mode)
	}
}
