package gateway

import (
	"context"
	"os"
	"time"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/redisconn"
	"github.com/vulnscan/vulnscan/pkg/telemetry"
)

// Run runs the gateway until ctx ends.
func Run(ctx context.Context, version string) error {
	log := logging.New(os.Stderr, "gateway")
	cfg, err := ReadConfig(config.FromOS())
	if err != nil {
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
	log.Info("starting", "version", version, "rate_limit_rps", cfg.RateRPS, "rate_limit_burst", cfg.RateBurst)
	return g.Serve(ctx, cfg)
}
