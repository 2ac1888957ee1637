// Package app wires the estimation service process: configuration, the
// database and its migrations (the service's tables and River's, both in
// schema "estimation"), the blob store, the guarded git fetcher, the River
// client running estimation jobs, and the gRPC APIs.
package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/s3blob" // s3:// blob URLs

	"github.com/vulnscan/vulnscan/pkg/archive"
	"github.com/vulnscan/vulnscan/pkg/boot"
	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/eventpub"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/plane"
	"github.com/vulnscan/vulnscan/pkg/server"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/estimation/internal/gitsrc"
	"github.com/vulnscan/vulnscan/services/estimation/internal/jobs"
	"github.com/vulnscan/vulnscan/services/estimation/internal/service"
	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
)

// Config is the estimation process configuration.
type Config struct {
	config.Common
	BlobURL         string   // VULNSCAN_BLOB_URL; empty: a directory under VULNSCAN_DATA_DIR
	AllowedCIDRs    []string // VULNSCAN_ALLOWED_PRIVATE_CIDRS
	ExtraCAFile     string   // VULNSCAN_EXTRA_CA_FILE: PEM certificates trusted for clones besides the system's
	CloneMaxBytes   int64    // ESTIMATION_CLONE_MAX_BYTES
	CloneMaxFiles   int      // ESTIMATION_CLONE_MAX_FILES
	CloneMaxTree    int64    // ESTIMATION_CLONE_MAX_TREE_BYTES: declared sizes of the commit's files added up
	UploadQuota     store.UploadQuota
	UploadRetention time.Duration // ESTIMATION_UPLOAD_RETENTION
	RunningPerOrg   int           // ESTIMATION_MAX_RUNNING_PER_ORG
	Archive         archive.Limits
	CloneTimeout    time.Duration // ESTIMATION_CLONE_TIMEOUT
	JobTimeout      time.Duration // ESTIMATION_JOB_TIMEOUT
	RescueAfter     time.Duration // ESTIMATION_RESCUE_AFTER
	Workers         int           // ESTIMATION_WORKERS: jobs run at once
	ReposInParallel int           // ESTIMATION_REPO_PARALLELISM: repositories of one job at once
}

// ReadConfig reads the configuration from env.
func ReadConfig(env *config.Env) (Config, error) {
	c := Config{
		Common:          config.ReadCommon(env, "estimation", "127.0.0.1:9202"),
		BlobURL:         env.String("VULNSCAN_BLOB_URL", ""),
		AllowedCIDRs:    env.List("VULNSCAN_ALLOWED_PRIVATE_CIDRS"),
		ExtraCAFile:     env.String("VULNSCAN_EXTRA_CA_FILE", ""),
		CloneMaxBytes:   int64(env.Int("ESTIMATION_CLONE_MAX_BYTES", 512<<20)),
		CloneMaxFiles:   env.Int("ESTIMATION_CLONE_MAX_FILES", 100_000),
		CloneMaxTree:    int64(env.Int("ESTIMATION_CLONE_MAX_TREE_BYTES", 1<<30)),
		CloneTimeout:    env.Duration("ESTIMATION_CLONE_TIMEOUT", 5*time.Minute),
		JobTimeout:      env.Duration("ESTIMATION_JOB_TIMEOUT", 15*time.Minute),
		Workers:         env.Int("ESTIMATION_WORKERS", 4),
		ReposInParallel: env.Int("ESTIMATION_REPO_PARALLELISM", 4),
	}
	var err error
	if c.Archive, err = archive.LimitsFromEnv(env); err != nil {
		env.Fail(err)
	}
	c.UploadQuota = store.UploadQuota{MaxCount: env.Int("ESTIMATION_MAX_UPLOADS", 500),
		MaxBytes: int64(env.Int("ESTIMATION_MAX_UPLOAD_BYTES", 10<<30))}
	c.UploadRetention = env.Duration("ESTIMATION_UPLOAD_RETENTION", 30*24*time.Hour)
	c.RunningPerOrg = env.Int("ESTIMATION_MAX_RUNNING_PER_ORG", 2)
	if c.UploadQuota.MaxCount < 1 || c.UploadQuota.MaxBytes < 1 || c.UploadRetention <= 0 || c.RunningPerOrg < 1 {
		env.Fail(fmt.Errorf("ESTIMATION_MAX_UPLOADS, ESTIMATION_MAX_UPLOAD_BYTES, ESTIMATION_UPLOAD_RETENTION and ESTIMATION_MAX_RUNNING_PER_ORG must be positive"))
	}
	c.RescueAfter = env.Duration("ESTIMATION_RESCUE_AFTER", c.JobTimeout+time.Minute)
	if c.RescueAfter <= c.JobTimeout {
		env.Fail(fmt.Errorf("ESTIMATION_RESCUE_AFTER must be longer than ESTIMATION_JOB_TIMEOUT"))
	}
	if c.CloneMaxBytes < 1 || c.CloneMaxFiles < 1 || c.CloneMaxTree < 1 || c.Workers < 1 || c.ReposInParallel < 1 {
		env.Fail(fmt.Errorf("estimation limits and worker counts must be positive"))
	}
	return c, env.Err()
}

// Run runs the estimation service until ctx ends.
func Run(ctx context.Context, version string) error {
	cfg, err := ReadConfig(config.FromOS())
	if err != nil {
		return err
	}
	log, closeLog := logging.Stderr("estimation")
	defer closeLog()
	sec, id, err := plane.Security(config.FromOS(), "estimation", cfg.Common)
	if err != nil {
		return err
	}
	pool, stop, err := boot.Start(ctx, "estimation", version, cfg.DatabaseURL, store.Migrate, boot.Queue(store.Schema))
	if err != nil {
		return err
	}
	defer stop()
	if err := boot.CheckRole(ctx, log, "estimation", pool); err != nil {
		return err
	}
	driver := riverpgxv5.New(pool)

	tmp := filepath.Join(cfg.DataDir, "tmp", "estimation")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	bucket, err := openBucket(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() { _ = bucket.Close() }()
	guard, err := netguard.New(cfg.AllowedCIDRs)
	if err != nil {
		return err
	}
	fetcher, err := gitsrc.New(guard, cfg.ExtraCAFile, gitsrc.Limits{MaxBytes: cfg.CloneMaxBytes, MaxFiles: cfg.CloneMaxFiles, MaxTreeBytes: cfg.CloneMaxTree, Timeout: cfg.CloneTimeout}, tmp)
	if err != nil {
		return err
	}
	authConn, err := server.Dial(cfg.AuthAddr, id, "auth")
	if err != nil {
		return err
	}
	defer func() { _ = authConn.Close() }()

	// Webhook events go to the findings service, which owns the webhooks.
	findingsConn, err := server.Dial(cfg.FindingsAddr, id, "findings")
	if err != nil {
		return err
	}
	defer func() { _ = findingsConn.Close() }()
	// The queue's River client is set once it exists (it needs the workers).
	queue := &jobs.Queue{}
	// An estimation's end queues its webhook event in the same transaction.
	st := &store.Store{Pool: pool, Ended: queue.Ended}

	svc := &service.Service{
		Store: st, Auth: authv1.NewAuthInternalServiceClient(authConn), Bucket: bucket,
		Fetcher: fetcher, Guard: guard, Enqueue: queue.Estimate, Log: log, TempDir: tmp, ArchiveLimits: cfg.Archive, Parallel: cfg.ReposInParallel,
		UploadQuota: cfg.UploadQuota, MaxRunningPerOrg: cfg.RunningPerOrg,
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &jobs.EstimateWorker{Estimator: svc, Store: st, Log: log, JobTimeout: cfg.JobTimeout})
	river.AddWorker(workers, &jobs.SweepStrandedWorker{Store: st, Log: log, Idle: jobs.SweepInterval})
	river.AddWorker(workers, &jobs.PurgeExpiredUploadsWorker{Store: st, Bucket: bucket, Log: log, Retention: cfg.UploadRetention})
	river.AddWorker(workers, &jobs.PublishEstimationEventWorker{Store: st, Events: &eventpub.Publisher{
		Webhooks: findingsv1.NewWebhookEventServiceClient(findingsConn), Namespace: jobs.EventNamespace}})
	rc, err := river.NewClient(driver, &river.Config{
		PeriodicJobs: []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(jobs.SweepInterval),
			func() (river.JobArgs, *river.InsertOpts) { return jobs.SweepStranded{}, nil }, &river.PeriodicJobOpts{RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(jobs.PurgeInterval),
				func() (river.JobArgs, *river.InsertOpts) { return jobs.PurgeExpiredUploads{}, nil }, &river.PeriodicJobOpts{RunOnStart: true})},
		Schema:               store.Schema,
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}},
		Workers:              workers,
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
		FetchPollInterval:    500 * time.Millisecond,
		Logger:               log,
	})
	if err != nil {
		return err
	}
	queue.River = rc

	p := server.New("estimation", log, cfg.GRPCListen, cfg.MetricsAddr, sec)
	p.Check(pool.Ping)
	estimationv1.RegisterEstimationServiceServer(p.GRPC, &service.Public{Service: svc})
	estimationv1.RegisterUploadServiceServer(p.GRPC, &service.Uploads{Service: svc})
	estimationv1.RegisterEstimationInternalServiceServer(p.GRPC, &service.Internal{Service: svc})
	p.Worker(func(ctx context.Context) error {
		// The client runs on its own context so that shutdown can let
		// running jobs finish within the grace period before cancelling them.
		if err := rc.Start(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("start job queue: %w", err)
		}
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
		defer cancel()
		if err := rc.Stop(sctx); err != nil {
			cctx, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel2()
			return rc.StopAndCancel(cctx)
		}
		return nil
	})
	log.InfoContext(ctx, "starting", "version", version, "blob", blobDescription(cfg), "job_timeout", cfg.JobTimeout.String())
	return p.Run(ctx, cfg.ShutdownGrace)
}

func openBucket(ctx context.Context, cfg Config) (*blob.Bucket, error) {
	if cfg.BlobURL != "" {
		b, err := blob.OpenBucket(ctx, cfg.BlobURL)
		if err != nil {
			return nil, fmt.Errorf("open blob store VULNSCAN_BLOB_URL: %w", err)
		}
		return b, nil
	}
	dir, err := filepath.Abs(filepath.Join(cfg.DataDir, "blobs"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return fileblob.OpenBucket(dir, &fileblob.Options{CreateDir: true, NoTempDir: false})
}

func blobDescription(cfg Config) string {
	if cfg.BlobURL != "" {
		return "url"
	}
	return "local directory"
}
