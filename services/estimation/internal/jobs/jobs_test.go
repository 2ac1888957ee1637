package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/fileblob"

	"github.com/vulnscan/vulnscan/pkg/boot"
	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	return &store.Store{Pool: dbtest.Migrated(t, "estimation_jobs", func(ctx context.Context, pool *pgxpool.Pool) error {
		if err := store.Migrate(ctx, pool); err != nil {
			return err
		}
		return boot.Queue(store.Schema)(ctx, pool)
	})}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// pending records an estimation of two public repositories, both pending.
func pending(t *testing.T, st *store.Store) store.Estimation {
	t.Helper()
	ctx := context.Background()
	e := store.Estimation{ID: uuid.NewString(), OrgID: uuid.NewString(), UserID: uuid.NewString(), Name: "n",
		Repos: []store.Repo{{Source: "public", RepoURL: "https://a/b"}, {Source: "public", RepoURL: "https://a/c"}}}
	require.NoError(t, db.InTx(ctx, st.Pool, func(tx pgx.Tx) error {
		var err error
		e, err = st.CreateEstimation(ctx, tx, e)
		return err
	}))
	return e
}

// estimator fails every run with err.
type estimator struct{ err error }

func (f estimator) Run(context.Context, string) error { return f.err }

// TestEstimateLastAttempt: a failed attempt is retried unchanged; the last
// one ends the estimation, its pending repositories failed; a snooze (the
// organization at its running limit) is never an attempt's failure.
func TestEstimateLastAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	e := pending(t, st)
	down := errors.New("auth unavailable")
	w := &EstimateWorker{Estimator: estimator{down}, Store: st, Log: quiet()}
	job := func(attempt int) *river.Job[Estimate] {
		return &river.Job[Estimate]{JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: MaxAttempts}, Args: Estimate{EstimationID: e.ID}}
	}
	require.ErrorIs(t, w.Work(ctx, job(1)), down)
	got, err := st.GetEstimation(ctx, e.OrgID, e.ID)
	require.NoError(t, err)
	require.Equal(t, vocab.EstimationPending, got.Status)

	snoozing := &EstimateWorker{Estimator: estimator{river.JobSnooze(time.Second)}, Store: st, Log: quiet()}
	var snooze *river.JobSnoozeError
	require.ErrorAs(t, snoozing.Work(ctx, job(MaxAttempts)), &snooze)
	got, err = st.GetEstimation(ctx, e.OrgID, e.ID)
	require.NoError(t, err)
	require.Equal(t, vocab.EstimationPending, got.Status)

	require.NoError(t, w.Work(ctx, job(MaxAttempts)))
	got, err = st.GetEstimation(ctx, e.OrgID, e.ID)
	require.NoError(t, err)
	require.Equal(t, vocab.EstimationFailed, got.Status)
	for _, r := range got.Repos {
		require.Equal(t, vocab.EstimationFailed, r.Status)
		require.Equal(t, internalFailure, r.Error)
	}
}

// TestSweepStranded: an idle estimation without a live job is ended; one
// updated recently is left to its job.
func TestSweepStranded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	stranded, fresh := pending(t, st), pending(t, st)
	_, err := st.Pool.Exec(ctx, `UPDATE estimation.estimations SET updated_at = now() - interval '1 hour' WHERE id = $1`, stranded.ID)
	require.NoError(t, err)
	w := &SweepStrandedWorker{Store: st, Log: quiet(), Idle: 10 * time.Minute}
	require.NoError(t, w.Work(ctx, &river.Job[SweepStranded]{}))
	got, err := st.GetEstimation(ctx, "", stranded.ID)
	require.NoError(t, err)
	require.Equal(t, vocab.EstimationFailed, got.Status)
	got, err = st.GetEstimation(ctx, "", fresh.ID)
	require.NoError(t, err)
	require.Equal(t, vocab.EstimationPending, got.Status)
}

// TestPurgeExpiredUploads: an upload past its retention loses its blob and
// its row; a recent one keeps both.
func TestPurgeExpiredUploads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	bucket, err := fileblob.OpenBucket(t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = bucket.Close() })
	org := uuid.NewString()
	upload := func() store.Upload {
		id := uuid.NewString()
		u, err := st.CreateUpload(ctx, store.Upload{ID: id, OrgID: org, UserID: uuid.NewString(), ContentType: "application/zip", SizeBytes: 1,
			SHA256: "s", ContentHash: "c", BlobKey: "uploads/" + id}, store.UploadQuota{})
		require.NoError(t, err)
		require.NoError(t, bucket.WriteAll(ctx, u.BlobKey, []byte("x"), nil))
		return u
	}
	old, recent := upload(), upload()
	_, err = st.Pool.Exec(ctx, `UPDATE estimation.uploads SET created_at = now() - interval '40 days' WHERE id = $1`, old.ID)
	require.NoError(t, err)
	w := &PurgeExpiredUploadsWorker{Store: st, Bucket: bucket, Log: quiet(), Retention: 30 * 24 * time.Hour}
	require.NoError(t, w.Work(ctx, &river.Job[PurgeExpiredUploads]{}))
	require.NoError(t, w.Work(ctx, &river.Job[PurgeExpiredUploads]{}), "a second run finds nothing to do")
	_, err = st.GetUpload(ctx, nil, org, old.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	exists, err := bucket.Exists(ctx, old.BlobKey)
	require.NoError(t, err)
	require.False(t, exists)
	_, err = st.GetUpload(ctx, nil, org, recent.ID)
	require.NoError(t, err)
	exists, err = bucket.Exists(ctx, recent.BlobKey)
	require.NoError(t, err)
	require.True(t, exists)
}

func TestEventType(t *testing.T) {
	t.Parallel()
	for status, want := range map[vocab.EstimationStatus]string{
		vocab.EstimationCompleted: "estimation.completed", vocab.EstimationPartial: "estimation.completed", vocab.EstimationFailed: "estimation.failed",
	} {
		require.Equal(t, want, EventType(status), status)
	}
}
