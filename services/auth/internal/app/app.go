// Package app wires the auth service process: configuration, stores,
// migrations and the three gRPC APIs.
package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/vulnscan/vulnscan/pkg/boot"
	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/gctune"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/plane"
	"github.com/vulnscan/vulnscan/pkg/redisconn"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/server"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	"github.com/vulnscan/vulnscan/services/auth/internal/service"
	"github.com/vulnscan/vulnscan/services/auth/internal/store"
)

// Config is the auth process configuration.
type Config struct {
	config.Common
	MaxActiveKeys int
}

// ReadConfig reads the configuration from env.
func ReadConfig(env *config.Env) (Config, error) {
	c := Config{
		Common:        config.ReadCommon(env, "auth", "127.0.0.1:9201"),
		MaxActiveKeys: env.Int("VULNSCAN_MAX_ACTIVE_KEYS", 10),
	}
	if c.MaxActiveKeys < 1 {
		env.Fail(fmt.Errorf("VULNSCAN_MAX_ACTIVE_KEYS must be at least 1"))
	}
	return c, env.Err()
}

// Run runs the auth service until ctx ends.
func Run(ctx context.Context, version string) error {
	log, closeLog := logging.Stderr("auth")
	defer closeLog()
	gogc := gctune.Apply(os.LookupEnv)
	cfg, err := ReadConfig(config.FromOS())
	if err != nil {
		return err
	}
	env := config.FromOS()
	box, err := secretbox.Load(secretbox.KeysFromEnv(env, "auth", cfg.DataDir))
	if err != nil {
		return err
	}
	sec, _, err := plane.Security(env, "auth", cfg.Common)
	if err != nil {
		return err
	}
	pool, stop, err := boot.Start(ctx, "auth", version, cfg.DatabaseURL, store.Migrate, boot.Reseal(box, store.SealedColumns...))
	if err != nil {
		return err
	}
	defer stop()
	if err := boot.CheckRole(ctx, log, "auth", pool); err != nil {
		return err
	}
	rdb, err := redisconn.Open(ctx, cfg.RedisURL, 60*time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = rdb.Close() }()

	svc := &service.Service{Store: &store.Store{Pool: pool}, Redis: rdb, Box: box, Log: log, MaxActiveKeys: cfg.MaxActiveKeys}
	p := server.New("auth", log, cfg.GRPCListen, cfg.MetricsAddr, sec)
	p.Check(pool.Ping)
	p.Check(func(ctx context.Context) error { return rdb.Ping(ctx).Err() })
	authv1.RegisterAuthServiceServer(p.GRPC, &service.Public{Service: svc})
	authv1.RegisterAuthInternalServiceServer(p.GRPC, &service.Internal{Service: svc})
	authv1.RegisterAuthAdminServiceServer(p.Admin, &service.Admin{Service: svc})
	p.Worker(svc.Announce)
	log.InfoContext(ctx, "starting", "version", version, "max_active_keys", cfg.MaxActiveKeys, "gogc", gogc)
	return p.Run(ctx, cfg.ShutdownGrace)
}
