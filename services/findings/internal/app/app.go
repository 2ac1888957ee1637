// Package app wires the findings service process: configuration, store,
// migrations, the auth client, the three gRPC APIs, the integration
// delivery worker, the outbound webhooks, the counter fold worker and the
// risk-expiry worker (the periodic ones all run package outbox's loop).
package app

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"time"

	"github.com/vulnscan/vulnscan/pkg/boot"
	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/gctune"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/plane"
	"github.com/vulnscan/vulnscan/pkg/redact"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/server"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/delivery"
	"github.com/vulnscan/vulnscan/services/findings/internal/expiry"
	"github.com/vulnscan/vulnscan/services/findings/internal/fold"
	"github.com/vulnscan/vulnscan/services/findings/internal/outbox"
	"github.com/vulnscan/vulnscan/services/findings/internal/service"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
	"github.com/vulnscan/vulnscan/services/findings/internal/webhook"
)

// Config is the findings process configuration.
type Config struct {
	config.Common
	AllowedPrivateCIDRs []string
	DeliveryPoll        time.Duration
	DeliveryBackoff     time.Duration
	DeliveryMaxBackoff  time.Duration
	DeliveryMaxAttempts int
	CountFoldEvery      time.Duration
	RiskExpiryEvery     time.Duration
	// IntakeConcurrency bounds the finding reports this process writes at
	// once (see store.IntakeSlots).
	IntakeConcurrency int
	// PublicURL is where users reach the API; links in pull request
	// comments point under it.
	PublicURL string
	Webhooks  WebhookConfig
}

// WebhookConfig tunes the outbound webhooks.
type WebhookConfig struct {
	MaxPerOrg   int
	Poll        time.Duration
	Backoff     time.Duration
	MaxBackoff  time.Duration
	MaxAttempts int
}

// ReadConfig reads the configuration from env.
func ReadConfig(env *config.Env) (Config, error) {
	c := Config{
		Common:              config.ReadCommon(env, "findings", "127.0.0.1:9204"),
		AllowedPrivateCIDRs: env.List("VULNSCAN_ALLOWED_PRIVATE_CIDRS"),
		DeliveryPoll:        env.Duration("FINDINGS_DELIVERY_POLL", time.Second),
		DeliveryBackoff:     env.Duration("FINDINGS_DELIVERY_BACKOFF", 5*time.Second),
		DeliveryMaxBackoff:  env.Duration("FINDINGS_DELIVERY_MAX_BACKOFF", time.Hour),
		DeliveryMaxAttempts: env.Int("FINDINGS_DELIVERY_MAX_ATTEMPTS", 12),
		CountFoldEvery:      env.Duration("FINDINGS_COUNT_FOLD_EVERY", 5*time.Second),
		RiskExpiryEvery:     env.Duration("FINDINGS_RISK_EXPIRY_EVERY", 30*time.Second),
		IntakeConcurrency:   env.Int("FINDINGS_INTAKE_CONCURRENCY", runtime.GOMAXPROCS(0)),
		Webhooks: WebhookConfig{
			MaxPerOrg:   env.Int("FINDINGS_MAX_WEBHOOKS", webhook.DefaultMaxPerOrg),
			Poll:        env.Duration("FINDINGS_WEBHOOK_POLL", time.Second),
			Backoff:     env.Duration("FINDINGS_WEBHOOK_BACKOFF", 30*time.Second),
			MaxBackoff:  env.Duration("FINDINGS_WEBHOOK_MAX_BACKOFF", 4*time.Hour),
			MaxAttempts: env.Int("FINDINGS_WEBHOOK_MAX_ATTEMPTS", 12),
		},
		PublicURL: env.String("VULNSCAN_PUBLIC_URL", "http://"+env.String("VULNSCAN_HTTP_ADDR", config.DefaultHTTPAddr)),
	}
	if w := c.Webhooks; w.MaxPerOrg < 1 || w.MaxAttempts < 1 || w.Poll <= 0 || w.Backoff <= 0 || w.MaxBackoff < w.Backoff {
		env.Fail(fmt.Errorf("FINDINGS_MAX_WEBHOOKS and FINDINGS_WEBHOOK_MAX_ATTEMPTS must be at least 1, FINDINGS_WEBHOOK_POLL and FINDINGS_WEBHOOK_BACKOFF positive, FINDINGS_WEBHOOK_MAX_BACKOFF at least the backoff"))
	}
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		env.Fail(fmt.Errorf("VULNSCAN_PUBLIC_URL must be an http or https URL"))
	}
	if c.RiskExpiryEvery <= 0 {
		env.Fail(fmt.Errorf("FINDINGS_RISK_EXPIRY_EVERY must be positive"))
	}
	if c.DeliveryPoll <= 0 || c.DeliveryBackoff <= 0 || c.DeliveryMaxBackoff < c.DeliveryBackoff {
		env.Fail(fmt.Errorf("FINDINGS_DELIVERY_POLL and FINDINGS_DELIVERY_BACKOFF must be positive, FINDINGS_DELIVERY_MAX_BACKOFF at least the backoff"))
	}
	if c.IntakeConcurrency < 1 {
		env.Fail(fmt.Errorf("FINDINGS_INTAKE_CONCURRENCY must be at least 1"))
	}
	if c.CountFoldEvery <= 0 {
		env.Fail(fmt.Errorf("FINDINGS_COUNT_FOLD_EVERY must be positive"))
	}
	if c.DeliveryMaxAttempts < 1 {
		env.Fail(fmt.Errorf("FINDINGS_DELIVERY_MAX_ATTEMPTS must be at least 1"))
	}
	return c, env.Err()
}

// Run runs the findings service until ctx ends.
func Run(ctx context.Context, version string) error {
	log, closeLog := logging.Stderr("findings")
	defer closeLog()
	gogc := gctune.Apply(os.LookupEnv)
	cfg, err := ReadConfig(config.FromOS())
	if err != nil {
		return err
	}
	env := config.FromOS()
	box, err := secretbox.Load(secretbox.KeysFromEnv(env, "findings", cfg.DataDir))
	if err != nil {
		return err
	}
	sec, id, err := plane.Security(env, "findings", cfg.Common)
	if err != nil {
		return err
	}
	pool, stop, err := boot.Start(ctx, "findings", version, cfg.DatabaseURL, store.Migrate, boot.Reseal(box, store.SealedColumns...))
	if err != nil {
		return err
	}
	defer stop()
	if err := boot.CheckRole(ctx, log, "findings", pool); err != nil {
		return err
	}
	guard, err := netguard.New(cfg.AllowedPrivateCIDRs)
	if err != nil {
		return err
	}
	authConn, err := server.Dial(cfg.AuthAddr, id, "auth")
	if err != nil {
		return err
	}
	defer func() { _ = authConn.Close() }()

	intake, err := store.NewIntakeSlots(cfg.IntakeConcurrency)
	if err != nil {
		return err
	}
	st := &store.Store{Pool: pool, Intake: intake, TextCopies: true}
	sealURL := func(id string, url []byte) ([]byte, error) { return box.Seal(url, store.IntegrationURLAD(id)) }
	if n, err := st.SealWebhookURLs(ctx, delivery.WebhookKind, sealURL, redact.Secret); err != nil {
		return err
	} else if n > 0 {
		log.InfoContext(ctx, "sealed stored webhook URLs", "count", n)
	}
	svc := &service.Service{Store: st, Auth: authv1.NewAuthInternalServiceClient(authConn), Box: box, Log: log}
	p := server.New("findings", log, cfg.GRPCListen, cfg.MetricsAddr, sec)
	p.Check(pool.Ping)
	findingsv1.RegisterFindingsServiceServer(p.GRPC, &service.Public{Service: svc})
	// The intake service is on both listeners: the main one lets the scan
	// identity report, the admin one lets the operator approve and list
	// (plane.Policies and plane.AdminPolicies say which method is where).
	findingsv1.RegisterFindingsIntakeServiceServer(p.GRPC, &service.Intake{Service: svc})
	findingsv1.RegisterFindingsIntakeServiceServer(p.Admin, &service.Intake{Service: svc})
	findingsv1.RegisterFindingsAdminServiceServer(p.Admin, &service.Admin{Service: svc})
	findingsv1.RegisterFindingsInboundServiceServer(p.GRPC, &service.Inbound{Service: svc, Now: time.Now})
	w := &delivery.Worker{Store: st, Box: box, Client: guard.Client(20*time.Second, 3), Log: log, PublicURL: cfg.PublicURL,
		Schedule: outbox.Schedule{Poll: cfg.DeliveryPoll, BaseBackoff: cfg.DeliveryBackoff, MaxBackoff: cfg.DeliveryMaxBackoff,
			MaxAttempts: cfg.DeliveryMaxAttempts, Batch: 20}}
	p.Worker(w.Run)
	// Outbound webhooks: the API on the public listener, event publishing
	// for the scan and estimation services, operator access on the admin
	// listener, and the delivery worker. Webhook receivers are never
	// followed through redirects (a 3xx fails the attempt).
	hooks := &webhook.API{Store: &webhook.Store{Pool: pool}, Box: box, Guard: guard, MaxPerOrg: cfg.Webhooks.MaxPerOrg}
	findingsv1.RegisterWebhookServiceServer(p.GRPC, &webhook.Public{API: hooks})
	findingsv1.RegisterWebhookEventServiceServer(p.GRPC, &webhook.Events{API: hooks})
	findingsv1.RegisterWebhookAdminServiceServer(p.Admin, &webhook.Admin{API: hooks})
	hookClient := guard.Client(20*time.Second, 0)
	hookClient.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	p.Worker((&webhook.Worker{Store: hooks.Store, Box: box, Client: hookClient, Log: log,
		Schedule: outbox.Schedule{Poll: cfg.Webhooks.Poll, BaseBackoff: cfg.Webhooks.Backoff, MaxBackoff: cfg.Webhooks.MaxBackoff,
			MaxAttempts: cfg.Webhooks.MaxAttempts, Batch: 20}}).Run)
	folder := &fold.Worker{Store: st, Keys: 1000}
	p.Worker(func(ctx context.Context) error {
		return outbox.Loop(ctx, cfg.CountFoldEvery, log, "folding counters failed", folder.Once)
	})
	reopener := &expiry.Worker{Store: st, Log: log}
	p.Worker(func(ctx context.Context) error {
		return outbox.Loop(ctx, cfg.RiskExpiryEvery, log, "reopen expired risk acceptances", reopener.Round)
	})
	log.InfoContext(ctx, "starting", "version", version, "delivery_poll", cfg.DeliveryPoll.String(), "gogc", gogc)
	return p.Run(ctx, cfg.ShutdownGrace)
}
