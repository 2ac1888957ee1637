// Package db opens PostgreSQL pools, runs transactions and applies each
// service's embedded migrations to the service's own schema.
package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/telemetry"
)

// DBTX is what queries need: a pool, a connection or a transaction.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// sessionSettings are the server settings every connection of ours runs
// with, sent when it opens. JIT compilation is off: the services run short
// statements that read a few index pages, and a plan whose estimated cost
// crosses jit_above_cost (a list over many keys, say) would spend several
// milliseconds compiling for a query that runs in one. Parallel plans are
// off too: a statement's workers are processes started for it, which took
// about 40 ms to deliver their first rows on a 2-core server (a page of a
// scan's findings with a tag, planned as a parallel walk of the tag's rows,
// took 63–68 ms against 8–11 ms run by one process), and the services
// answer many requests at once, whose own processes already keep the
// cores busy; the exports, the longest statements, took the same time
// either way.
var sessionSettings = map[string]string{"jit": "off", "max_parallel_workers_per_gather": "0"}

// Configure applies sessionSettings to cfg, except those its URL sets.
func Configure(cfg *pgx.ConnConfig) {
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	for k, v := range sessionSettings {
		if _, ok := cfg.RuntimeParams[k]; !ok {
			cfg.RuntimeParams[k] = v
		}
	}
}

// Open connects to url, creating the database when it does not exist yet,
// with sessionSettings and, when spans are exported, a span for every
// query (without an exporter none would be recorded, and the tracer's
// non-recording spans cost a few percent of a short read). It waits up to
// wait for the server to answer.
func Open(ctx context.Context, url string, wait time.Duration) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	Configure(cfg.ConnConfig)
	if telemetry.Exporting() {
		cfg.ConnConfig.Tracer = otelpgx.NewTracer(otelpgx.WithDisableSQLStatementInAttributes())
	}
	deadline := time.Now().Add(wait)
	for {
		pool, err := connect(ctx, cfg)
		if err == nil {
			return pool, nil
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "3D000" { // invalid_catalog_name
			if cerr := createDatabase(ctx, cfg.ConnConfig); cerr != nil {
				return nil, cerr
			}
			continue
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("connect to database: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func connect(ctx context.Context, cfg *pgxpool.Config) (*pgxpool.Pool, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

func createDatabase(ctx context.Context, cc *pgx.ConnConfig) error {
	admin := cc.Copy()
	admin.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect to maintenance database: %w", err)
	}
	defer func() { _ = conn.Close(ctx) }()
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{cc.Database}.Sanitize())
	var pgErr *pgconn.PgError
	if err != nil && !(errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505")) {
		return fmt.Errorf("create database %s: %w", cc.Database, err)
	}
	return nil
}

// TxBeginner starts transactions; *pgxpool.Pool is one.
type TxBeginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// InTx runs fn in a transaction, committing when it returns nil.
func InTx(ctx context.Context, db TxBeginner, fn func(tx pgx.Tx) error) error {
	return inTx(ctx, db.Begin, fn)
}

// TxOptionsBeginner starts transactions with options (isolation level,
// access mode); *pgxpool.Pool is one.
type TxOptionsBeginner interface {
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
}

// InTxWith runs fn in a transaction started with opts, committing when it
// returns nil.
func InTxWith(ctx context.Context, db TxOptionsBeginner, opts pgx.TxOptions, fn func(tx pgx.Tx) error) error {
	return inTx(ctx, func(ctx context.Context) (pgx.Tx, error) { return db.BeginTx(ctx, opts) }, fn)
}

func inTx(ctx context.Context, begin func(context.Context) (pgx.Tx, error), fn func(tx pgx.Tx) error) error {
	tx, err := begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// IsUniqueViolation reports whether err is a unique constraint violation,
// optionally of the named constraint.
func IsUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && (constraint == "" || pgErr.ConstraintName == constraint)
}
