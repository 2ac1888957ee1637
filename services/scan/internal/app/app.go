// Package app wires the scan service process. SCAN_MODE selects what it
// runs: "api" serves the gRPC API (and inserts jobs), "worker" runs scan and
// recovery jobs from the queue, "all" (the default for make run) does both.
// API and workers scale separately; both serve gRPC health and metrics.
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"google.golang.org/grpc"

	"github.com/vulnscan/vulnscan/pkg/archive"
	"github.com/vulnscan/vulnscan/pkg/boot"
	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/engine"
	"github.com/vulnscan/vulnscan/pkg/engine/exclude"
	"github.com/vulnscan/vulnscan/pkg/eventpub"
	"github.com/vulnscan/vulnscan/pkg/gitfetch"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/plane"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/server"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/jobs"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle"
	"github.com/vulnscan/vulnscan/services/scan/internal/service"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// Config is the scan process configuration.
type Config struct {
	config.Common
	Mode          string
	Workers       int
	JobTimeout    time.Duration
	RescueAfter   time.Duration
	RecoveryDelay time.Duration
	AllowedCIDRs  []string
	ExtraCAFile   string
	Fetch         gitfetch.Limits
	Archive       archive.Limits
	Exclude       exclude.Limits      // SCAN_MAX_EXCLUDE_PATTERNS, SCAN_MAX_EXCLUDE_CHARS
	Documents     store.DocumentQuota // SCAN_MAX_CONTEXT_DOCUMENTS, SCAN_MAX_CONTEXT_DOCUMENT_CHARS
	RunningPerOrg int                 // SCAN_MAX_RUNNING_PER_ORG
	LiveBudget    time.Duration       // SCAN_LIVE_BUDGET: all live targets of one scan together
	// FetchPoll (SCAN_QUEUE_POLL) is how often a worker looks for queued
	// scans besides being told of new ones; FetchCooldown
	// (SCAN_QUEUE_FETCH_COOLDOWN) is the least time between two looks.
	FetchPoll, FetchCooldown time.Duration
}

// DefaultWorkers is the number of scans one process runs at once unless
// SCAN_WORKERS says otherwise: two per core. The engine already analyses
// one scan with one goroutine per core, so a single large scan keeps every
// core busy; a second slot per core keeps them busy while a scan waits on
// its checkout, the database or the findings service, which is most of a
// small scan's time (make bench-edge measures 8 small scans at once).
func DefaultWorkers() int { return 2 * runtime.GOMAXPROCS(0) }

// DefaultFetchPoll and DefaultFetchCooldown pace how a worker takes queued
// scans. A small scan runs for about a tenth of a second, so a scan waiting
// for a busy worker would otherwise wait up to the queue's default
// one-second poll after a slot frees; a look every 100 ms is one cheap
// query, and a 20 ms cooldown lets a burst of inserted scans be taken
// together without a look per insert.
const (
	DefaultFetchPoll     = 100 * time.Millisecond
	DefaultFetchCooldown = 20 * time.Millisecond
)

// ReadConfig reads the configuration from env.
func ReadConfig(env *config.Env) (Config, error) {
	c := Config{
		Common:        config.ReadCommon(env, "scan", "127.0.0.1:9203"),
		Mode:          env.String("SCAN_MODE", "all"),
		Workers:       env.Int("SCAN_WORKERS", DefaultWorkers()),
		JobTimeout:    env.Duration("SCAN_JOB_TIMEOUT", 30*time.Minute),
		RecoveryDelay: env.Duration("SCAN_START_RECOVERY_AFTER", lifecycle.DefaultRecoveryDelay),
		RescueAfter:   env.Duration("SCAN_JOB_RESCUE_AFTER", 0),
		AllowedCIDRs:  env.List("VULNSCAN_ALLOWED_PRIVATE_CIDRS"),
		ExtraCAFile:   env.String("VULNSCAN_EXTRA_CA_FILE", ""),
	}
	c.Fetch = gitfetch.DefaultLimits
	c.Fetch.MaxBytes = int64(env.Int("SCAN_FETCH_MAX_BYTES", int(c.Fetch.MaxBytes)))
	c.Fetch.Timeout = env.Duration("SCAN_FETCH_TIMEOUT", c.Fetch.Timeout)
	c.Fetch.MaxFiles = env.Int("SCAN_CHECKOUT_MAX_FILES", c.Fetch.MaxFiles)
	c.Fetch.MaxTreeBytes = int64(env.Int("SCAN_CHECKOUT_MAX_BYTES", int(c.Fetch.MaxTreeBytes)))
	c.Fetch.MaxFileBytes = int64(env.Int("SCAN_CHECKOUT_MAX_FILE_BYTES", int(c.Fetch.MaxFileBytes)))
	if c.Fetch.MaxBytes < 1 || c.Fetch.Timeout <= 0 || c.Fetch.MaxFiles < 1 || c.Fetch.MaxTreeBytes < 1 || c.Fetch.MaxFileBytes < 1 {
		env.Fail(errors.New("SCAN_FETCH_* and SCAN_CHECKOUT_* limits must be positive"))
	}
	var err error
	if c.Archive, err = archive.LimitsFromEnv(env); err != nil {
		env.Fail(err)
	}
	c.Exclude = exclude.Limits{MaxPatterns: env.Int("SCAN_MAX_EXCLUDE_PATTERNS", exclude.DefaultLimits.MaxPatterns),
		MaxBytes: env.Int("SCAN_MAX_EXCLUDE_CHARS", exclude.DefaultLimits.MaxBytes)}
	c.Documents = store.DocumentQuota{MaxCount: env.Int("SCAN_MAX_CONTEXT_DOCUMENTS", 100),
		MaxSize: int64(env.Int("SCAN_MAX_CONTEXT_DOCUMENT_CHARS", 2_000_000))}
	c.RunningPerOrg = env.Int("SCAN_MAX_RUNNING_PER_ORG", 1)
	c.LiveBudget = env.Duration("SCAN_LIVE_BUDGET", 10*time.Minute)
	c.FetchPoll = env.Duration("SCAN_QUEUE_POLL", DefaultFetchPoll)
	c.FetchCooldown = env.Duration("SCAN_QUEUE_FETCH_COOLDOWN", DefaultFetchCooldown)
	if c.FetchCooldown <= 0 || c.FetchPoll < c.FetchCooldown {
		env.Fail(errors.New("SCAN_QUEUE_FETCH_COOLDOWN must be positive and SCAN_QUEUE_POLL at least as long"))
	}
	if c.Exclude.MaxPatterns < 1 || c.Exclude.MaxBytes < 1 || c.Documents.MaxCount < 1 || c.Documents.MaxSize < 1 || c.RunningPerOrg < 1 || c.LiveBudget <= 0 {
		env.Fail(errors.New("SCAN_MAX_EXCLUDE_*, SCAN_MAX_CONTEXT_DOCUMENT*, SCAN_MAX_RUNNING_PER_ORG and SCAN_LIVE_BUDGET must be positive"))
	}
	if c.Mode != "api" && c.Mode != "worker" && c.Mode != "all" {
		env.Fail(fmt.Errorf("SCAN_MODE must be api, worker or all, not %q", c.Mode))
	}
	if c.RecoveryDelay <= 2*lifecycle.DefaultStartBudget {
		env.Fail(fmt.Errorf("SCAN_START_RECOVERY_AFTER must be longer than %s, twice the time a start may take", 2*lifecycle.DefaultStartBudget))
	}
	if c.RescueAfter == 0 {
		c.RescueAfter = c.JobTimeout + 5*time.Minute
	}
	if c.RescueAfter <= c.JobTimeout {
		env.Fail(errors.New("SCAN_JOB_RESCUE_AFTER must be longer than SCAN_JOB_TIMEOUT, or a running scan could be run twice"))
	}
	if c.Workers < 1 {
		env.Fail(errors.New("SCAN_WORKERS must be at least 1"))
	}
	return c, env.Err()
}

// Run runs the scan service until ctx ends.
func Run(ctx context.Context, version string) error {
	log, closeLog := logging.Stderr("scan")
	defer closeLog()
	cfg, err := ReadConfig(config.FromOS())
	if err != nil {
		return err
	}
	env := config.FromOS()
	box, err := secretbox.Load(secretbox.KeysFromEnv(env, "scan", cfg.DataDir))
	if err != nil {
		return err
	}
	sec, id, err := plane.Security(env, "scan", cfg.Common)
	if err != nil {
		return err
	}
	pool, stop, err := boot.Start(ctx, "scan", version, cfg.DatabaseURL, store.Migrate, boot.Queue(store.Schema), boot.Reseal(box, store.SealedColumns...))
	if err != nil {
		return err
	}
	defer stop()
	if err := boot.CheckRole(ctx, log, "scan", pool); err != nil {
		return err
	}
	guard, err := netguard.New(cfg.AllowedCIDRs)
	if err != nil {
		return err
	}
	gitClient, err := gitfetch.NewClient(guard, cfg.ExtraCAFile)
	if err != nil {
		return err
	}
	gitfetch.Install(gitClient)

	conns := map[string]string{"auth": cfg.AuthAddr, "estimation": cfg.EstimationAddr, "findings": cfg.FindingsAddr}
	dialed := map[string]*grpc.ClientConn{}
	for name, addr := range conns {
		cc, err := server.Dial(addr, id, name)
		if err != nil {
			return err
		}
		defer func() { _ = cc.Close() }()
		dialed[name] = cc
	}
	authc := authv1.NewAuthInternalServiceClient(dialed["auth"])
	estc := estimationv1.NewEstimationInternalServiceClient(dialed["estimation"])
	findc := findingsv1.NewFindingsIntakeServiceClient(dialed["findings"])
	// The queue's River client is set once it exists (it needs the workers).
	queue := &jobs.Queue{}
	// A scan's end queues its webhook event in the same transaction.
	st := &store.Store{Pool: pool, Ended: queue.Ended}
	comp := &lifecycle.Compensations{Store: st, Auth: authc, Estimation: estc}
	publisher := &jobs.PublishScanEventWorker{Store: st, Events: &eventpub.Publisher{
		Webhooks: findingsv1.NewWebhookEventServiceClient(dialed["findings"]), Namespace: jobs.EventNamespace}}
	starter := &service.Starter{Pool: pool, Store: st, Queue: queue, Estimation: estc, Auth: authc, Findings: findc, Guard: guard, Box: box, Log: log,
		Exclude: cfg.Exclude, RecoveryDelay: cfg.RecoveryDelay}

	workers := river.NewWorkers()
	rcfg := &river.Config{Schema: store.Schema, Workers: workers, Logger: log.With("component", "queue"),
		JobTimeout: cfg.JobTimeout, RescueStuckJobsAfter: cfg.RescueAfter,
		FetchCooldown: cfg.FetchCooldown, FetchPollInterval: cfg.FetchPoll}
	runWorkers := cfg.Mode == "worker" || cfg.Mode == "all"
	if runWorkers {
		workDir := cfg.DataDir + "/scans"
		if err := os.MkdirAll(workDir, 0o700); err != nil {
			return err
		}
		river.AddWorker(workers, &jobs.RunScanWorker{
			Store: st, Estimation: estc, Auth: authc, Findings: findc, Box: box, Log: log,
			Engine: engine.New(engine.WithLogger(log), engine.WithExcludeLimits(cfg.Exclude), engine.WithLiveBudget(cfg.LiveBudget)), LiveClient: guard.Client(20*time.Second, 0),
			WorkDir: workDir, JobTimeout: cfg.JobTimeout, Fetch: cfg.Fetch, Archive: cfg.Archive, MaxRunningPerOrg: cfg.RunningPerOrg,
		})
		river.AddWorker(workers, &jobs.RecoverStartWorker{Compensations: comp})
		river.AddWorker(workers, &jobs.UndoCancelledStartWorker{Compensations: comp})
		river.AddWorker(workers, &jobs.SweepStrandedWorker{Compensations: comp, Log: log, Idle: jobs.DefaultSweepInterval})
		river.AddWorker(workers, publisher)
		rcfg.PeriodicJobs = []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(jobs.DefaultSweepInterval),
			func() (river.JobArgs, *river.InsertOpts) { return jobs.SweepStranded{}, nil }, &river.PeriodicJobOpts{RunOnStart: true})}
		rcfg.Queues = map[string]river.QueueConfig{
			jobs.QueueScans:       {MaxWorkers: cfg.Workers},
			jobs.QueueMaintenance: {MaxWorkers: 2},
		}
	} else {
		// Insert-only clients still need the job kinds registered.
		river.AddWorker(workers, &jobs.RunScanWorker{})
		river.AddWorker(workers, &jobs.RecoverStartWorker{Compensations: comp})
		river.AddWorker(workers, &jobs.UndoCancelledStartWorker{Compensations: comp})
		river.AddWorker(workers, &jobs.SweepStrandedWorker{})
		river.AddWorker(workers, publisher)
	}
	rc, err := river.NewClient(riverpgxv5.New(pool), rcfg)
	if err != nil {
		return fmt.Errorf("queue client: %w", err)
	}
	queue.River = rc

	p := server.New("scan", log, cfg.GRPCListen, cfg.MetricsAddr, sec)
	p.Check(pool.Ping)
	if cfg.Mode == "api" || cfg.Mode == "all" {
		scanv1.RegisterScanServiceServer(p.GRPC, &service.Service{Store: st, Starter: starter, Findings: findc, Log: log, Documents: cfg.Documents})
	}
	if runWorkers {
		p.Worker(func(ctx context.Context) error {
			if err := rc.Start(context.WithoutCancel(ctx)); err != nil {
				return fmt.Errorf("start queue: %w", err)
			}
			<-ctx.Done()
			// Let running scans finish within the grace period, then cancel
			// them: a cancelled scan snoozes back onto the queue.
			sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace/2)
			defer cancel()
			if err := rc.Stop(sctx); err != nil {
				cctx, ccancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace/2)
				defer ccancel()
				return rc.StopAndCancel(cctx)
			}
			return nil
		})
	}
	log.InfoContext(ctx, "starting", "version", version, "mode", cfg.Mode, "workers", cfg.Workers)
	return p.Run(ctx, cfg.ShutdownGrace)
}
