package gateway

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/gctune"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/redisconn"
	"github.com/vulnscan/vulnscan/pkg/telemetry"
)

// Run runs the gateway until ctx ends.
func Run(ctx context.Context, version string) error {
	log, closeLog := logging.Stderr("gateway")
	defer closeLog()
	gogc := gctune.Apply(os.LookupEnv)
	env := config.FromOS()
	cfg, err := ReadConfig(env)
	if err != nil {
		return err
	}
	if cfg.Identity, err = mtls.LoadFromEnv(env, mtls.Gateway); err != nil {
		return fmt.Errorf("gateway identity: %w", err)
	}
	if cfg.Signer, err = principal.SignerFromEnv(env); err != nil {
		return err
	}
	shutdownTracing, err := telemetry.Setup(ctx, "gateway", version)
	if err != nil {
		return err
	}
	defer func() { _ = shutdownTracing(context.Background()) }()
	rdb, err := redisconn.Open(ctx, cfg.RedisURL, 60*time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = rdb.Close() }()
	g, err := New(ctx, cfg, rdb, log)
	if err != nil {
		return err
	}
	defer g.Close()
	log.InfoContext(ctx, "starting", "version", version, "rate_limit_rps", cfg.RateRPS, "rate_limit_burst", cfg.RateBurst, "gogc", gogc)
	return g.Serve(ctx, cfg)
}
