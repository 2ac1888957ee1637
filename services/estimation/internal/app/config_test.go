package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/archive"
	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
)

func TestReadConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := ReadConfig(config.FromMap(nil))
	require.NoError(t, err)
	require.Equal(t, "estimation", c.Service)
	require.Equal(t, "127.0.0.1:9202", c.MetricsAddr)
	require.Equal(t, c.EstimationAddr, c.GRPCListen)
	require.Empty(t, c.AdminListen, "estimation serves no admin API")
	require.Equal(t, int64(512<<20), c.CloneMaxBytes)
	require.Equal(t, 100_000, c.CloneMaxFiles)
	require.Equal(t, int64(1<<30), c.CloneMaxTree)
	require.Equal(t, 5*time.Minute, c.CloneTimeout)
	require.Equal(t, 15*time.Minute, c.JobTimeout)
	require.Equal(t, 16*time.Minute, c.RescueAfter, "a minute after the job timeout")
	require.Equal(t, 4, c.Workers)
	require.Equal(t, 4, c.ReposInParallel)
	require.Equal(t, store.UploadQuota{MaxCount: 500, MaxBytes: 10 << 30}, c.UploadQuota)
	require.Equal(t, 30*24*time.Hour, c.UploadRetention)
	require.Equal(t, 2, c.RunningPerOrg)
	require.Equal(t, archive.DefaultLimits, c.Archive)
}

func TestReadConfigOverrides(t *testing.T) {
	t.Parallel()
	c, err := ReadConfig(config.FromMap(map[string]string{
		"ESTIMATION_JOB_TIMEOUT":         "2m",
		"ESTIMATION_WORKERS":             "1",
		"ESTIMATION_MAX_UPLOADS":         "7",
		"VULNSCAN_ARCHIVE_MAX_DEPTH":     "3",
		"VULNSCAN_BLOB_URL":              "s3://bucket",
		"VULNSCAN_ALLOWED_PRIVATE_CIDRS": "10.1.0.0/16",
	}))
	require.NoError(t, err)
	require.Equal(t, 2*time.Minute, c.JobTimeout)
	require.Equal(t, 3*time.Minute, c.RescueAfter, "the rescue default follows the job timeout")
	require.Equal(t, 1, c.Workers)
	require.Equal(t, 7, c.UploadQuota.MaxCount)
	require.Equal(t, 3, c.Archive.MaxDepth)
	require.Equal(t, "s3://bucket", c.BlobURL)
	require.Equal(t, []string{"10.1.0.0/16"}, c.AllowedCIDRs)
	require.Equal(t, "url", blobDescription(c))
}

func TestReadConfigRefuses(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"uploads":       {map[string]string{"ESTIMATION_MAX_UPLOADS": "0"}, "ESTIMATION_MAX_UPLOADS, ESTIMATION_MAX_UPLOAD_BYTES, ESTIMATION_UPLOAD_RETENTION and ESTIMATION_MAX_RUNNING_PER_ORG must be positive"},
		"retention":     {map[string]string{"ESTIMATION_UPLOAD_RETENTION": "0s"}, "ESTIMATION_UPLOAD_RETENTION"},
		"running":       {map[string]string{"ESTIMATION_MAX_RUNNING_PER_ORG": "-1"}, "ESTIMATION_MAX_RUNNING_PER_ORG must be positive"},
		"rescue":        {map[string]string{"ESTIMATION_JOB_TIMEOUT": "10m", "ESTIMATION_RESCUE_AFTER": "10m"}, "ESTIMATION_RESCUE_AFTER must be longer than ESTIMATION_JOB_TIMEOUT"},
		"workers":       {map[string]string{"ESTIMATION_WORKERS": "0"}, "estimation limits and worker counts must be positive"},
		"clone files":   {map[string]string{"ESTIMATION_CLONE_MAX_FILES": "0"}, "estimation limits and worker counts must be positive"},
		"archive depth": {map[string]string{"VULNSCAN_ARCHIVE_MAX_DEPTH": "0"}, "VULNSCAN_ARCHIVE_MAX_DEPTH must be positive"},
		"not a number":  {map[string]string{"ESTIMATION_WORKERS": "four"}, `ESTIMATION_WORKERS: "four" is not an integer`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadConfig(config.FromMap(tc.env))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestOpenBucketLocal: without VULNSCAN_BLOB_URL uploads are kept in a
// private directory under the data directory.
func TestOpenBucketLocal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := Config{}
	cfg.DataDir = t.TempDir()
	require.Equal(t, "local directory", blobDescription(cfg))
	b, err := openBucket(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	require.NoError(t, b.WriteAll(ctx, "org/upload", []byte("zip"), nil))
	got, err := os.ReadFile(filepath.Join(cfg.DataDir, "blobs", "org", "upload"))
	require.NoError(t, err)
	require.Equal(t, "zip", string(got))
	info, err := os.Stat(filepath.Join(cfg.DataDir, "blobs"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), info.Mode().Perm())

	_, err = openBucket(ctx, Config{BlobURL: "nosuch://bucket"})
	require.ErrorContains(t, err, "open blob store VULNSCAN_BLOB_URL")
}
