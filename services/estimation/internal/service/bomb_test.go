package service

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/fileblob"

	"github.com/vulnscan/vulnscan/pkg/archive"
	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
)

// TestEstimateUploadBomb: an archive met during estimation that breaks the
// limits (stored before they were lowered, say) fails its repository for
// good with the refusal as its error, not "completed", and the partial
// extraction is removed.
func TestEstimateUploadBomb(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.Migrated(t, "estimation_service", store.Migrate)
	bucket, err := fileblob.OpenBucket(t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = bucket.Close() })
	tmp := t.TempDir()
	s := &Service{Store: &store.Store{Pool: pool}, Bucket: bucket, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), TempDir: tmp,
		ArchiveLimits: archive.Limits{MaxBytes: 1 << 20, MaxEntries: 50, MaxPath: 256, MaxDepth: 16}}

	// 200 nested directories, each with a file: extraction creates some
	// before the entry cap stops it.
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for i := 0; i < 200; i++ {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("d%03d/e/f.txt", i), Typeflag: tar.TypeReg, Mode: 0o644, Size: 1}))
		_, err := tw.Write([]byte("x"))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())

	org := uuid.NewString()
	u, err := s.Store.CreateUpload(ctx, store.Upload{ID: uuid.NewString(), OrgID: org, UserID: uuid.NewString(), ContentType: archive.TypeTarGz,
		SizeBytes: int64(buf.Len()), SHA256: "s", ContentHash: "c", BlobKey: "uploads/bomb"}, store.UploadQuota{})
	require.NoError(t, err)
	require.NoError(t, bucket.WriteAll(ctx, u.BlobKey, buf.Bytes(), nil))
	e := store.Estimation{ID: uuid.NewString(), OrgID: org, UserID: uuid.NewString(), Name: "n", Repos: []store.Repo{{Source: string(vocab.SourceUpload), RepoURL: "upload://" + u.ID}}}
	require.NoError(t, db.InTx(ctx, pool, func(tx pgx.Tx) error {
		var err error
		e, err = s.Store.CreateEstimation(ctx, tx, e)
		return err
	}))

	r, err := s.estimateRepo(ctx, e, e.Repos[0])
	require.NoError(t, err, "a refused archive is the repository's failure, not a retry")
	require.Equal(t, vocab.EstimationFailed, r.Status)
	require.Contains(t, r.Error, "more than 50 entries")
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "the partial extraction and the archive copy are removed")
}
