// Package boot does the start-up every service process shares: tracing,
// the database pool (the database is created when missing), and the
// service's migrations, River's queue tables included for the services that
// run background jobs.
package boot

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/telemetry"
)

// Migration brings a schema up to date.
type Migration func(context.Context, *pgxpool.Pool) error

// Start sets up tracing for service, opens databaseURL (waiting up to a
// minute for the server) and applies the migrations in order. stop flushes
// traces and closes the pool.
func Start(ctx context.Context, service, version, databaseURL string, migrations ...Migration) (pool *pgxpool.Pool, stop func(), err error) {
	shutdownTracing, err := telemetry.Setup(ctx, service, version)
	if err != nil {
		return nil, nil, err
	}
	pool, err = db.Open(ctx, databaseURL, 60*time.Second)
	if err != nil {
		_ = shutdownTracing(context.Background())
		return nil, nil, err
	}
	stop = func() {
		pool.Close()
		_ = shutdownTracing(context.Background())
	}
	for _, m := range migrations {
		if err := m(ctx, pool); err != nil {
			stop()
			return nil, nil, fmt.Errorf("migrate: %w", err)
		}
	}
	return pool, stop, nil
}

// Queue returns the migration of River's tables in schema. River's
// migrations cannot share one transaction (they add enum values), so
// replicas starting together are serialized by a session-level advisory
// lock held on one connection.
func Queue(schema string) Migration {
	return func(ctx context.Context, pool *pgxpool.Pool) error {
		m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema})
		if err != nil {
			return err
		}
		h := fnv.New64a()
		_, _ = h.Write([]byte("vulnscan-queue-migrate:" + schema))
		lock := int64(h.Sum64() >> 1)
		conn, err := pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lock); err != nil {
			return err
		}
		defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lock) }()
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("queue migrations: %w", err)
		}
		return nil
	}
}
