// Package boot does the start-up every service process shares: tracing,
// the database pool (the database is created when missing), and the
// service's migrations, River's queue tables included for the services that
// run background jobs.
package boot

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
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

// SealedColumn is a column of secretbox values and how the associated data
// names its rows: RowExpr is the SQL expression giving the AD row string and
// Key the primary key column.
type SealedColumn struct {
	Table, Column, Key, RowExpr string
}

// Reseal is the migration of sealed values written in secretbox's version 1
// format (the shared key, no associated data): each is opened and sealed
// again with the service's key and bound to its row and column. An update
// applies only while the value is unchanged, so replicas starting together
// or a concurrent write never lose a secret; it is idempotent.
func Reseal(box *secretbox.Box, cols ...SealedColumn) Migration {
	return func(ctx context.Context, pool *pgxpool.Pool) error {
		for _, c := range cols {
			rows, err := pool.Query(ctx, fmt.Sprintf(`SELECT %s::text, %s, %s FROM %s WHERE length(%s) > 0 AND get_byte(%s, 0) = 1`,
				c.Key, c.RowExpr, c.Column, c.Table, c.Column, c.Column))
			if err != nil {
				return fmt.Errorf("reseal %s.%s: %w", c.Table, c.Column, err)
			}
			type old struct {
				key, row string
				sealed   []byte
			}
			list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (old, error) {
				var o old
				err := r.Scan(&o.key, &o.row, &o.sealed)
				return o, err
			})
			if err != nil {
				return fmt.Errorf("reseal %s.%s: %w", c.Table, c.Column, err)
			}
			for _, o := range list {
				ad := secretbox.AD{Table: c.Table, Column: c.Column, Row: o.row}
				pt, legacy, err := box.Open(o.sealed, ad)
				if err != nil {
					return fmt.Errorf("reseal %s.%s row %s: %w", c.Table, c.Column, o.key, err)
				}
				if !legacy {
					continue
				}
				fresh, err := box.Seal(pt, ad)
				if err != nil {
					return err
				}
				if _, err := pool.Exec(ctx, fmt.Sprintf(`UPDATE %s SET %s = $1 WHERE %s::text = $2 AND %s = $3`, c.Table, c.Column, c.Key, c.Column),
					fresh, o.key, o.sealed); err != nil {
					return fmt.Errorf("reseal %s.%s row %s: %w", c.Table, c.Column, o.key, err)
				}
			}
		}
		return nil
	}
}

// CheckRole logs the database role the service connected as, with a warning
// when that role can do more than a service role should (superuser,
// CREATEROLE, CREATEDB or BYPASSRLS): the shared administrator URL is in use,
// as when per-service roles could not be provisioned (see
// db.ProvisionRoles), and a compromise of this process reaches every schema.
func CheckRole(ctx context.Context, log *slog.Logger, service string, pool *pgxpool.Pool) error {
	var role string
	var broad bool
	if err := pool.QueryRow(ctx, `SELECT current_user::text, rolsuper OR rolcreaterole OR rolcreatedb OR rolbypassrls FROM pg_roles WHERE rolname = current_user`).
		Scan(&role, &broad); err != nil {
		return fmt.Errorf("read database role: %w", err)
	}
	if broad {
		log.WarnContext(ctx, "connected to PostgreSQL as a role with privileges beyond the service's own schema; provision per-service roles (bin/vulnscan-dbroles) or set "+strings.ToUpper(service)+"_DATABASE_URL",
			"db_role", role)
		return nil
	}
	log.InfoContext(ctx, "connected to PostgreSQL", "db_role", role)
	return nil
}
