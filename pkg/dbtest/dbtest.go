// Package dbtest gives integration tests a database of their own on the
// PostgreSQL server at DATABASE_URL (the one `make test` provides). A test
// that cannot reach the server fails; it never skips.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/config"
)

// ServerURL is the PostgreSQL server tests use.
func ServerURL() string {
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return u
	}
	return config.DefaultDatabaseURL
}

// CreateDatabase creates an empty database named with prefix and returns
// its URL and a function that drops it.
func CreateDatabase(ctx context.Context, prefix string) (string, func(), error) {
	cfg, err := pgx.ParseConfig(ServerURL())
	if err != nil {
		return "", nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := prefix + "_" + hex.EncodeToString(b)
	admin := cfg.Copy()
	admin.Database = "postgres"
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, admin)
	if err != nil {
		return "", nil, fmt.Errorf("connect to the test PostgreSQL server (run tests with make test): %w", err)
	}
	defer func() { _ = conn.Close(cctx) }()
	if _, err := conn.Exec(cctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create test database: %w", err)
	}
	u := cfg.Copy()
	u.Database = name
	url := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
	if cfg.Password != "" {
		url = fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Password, cfg.Host, cfg.Port, name)
	}
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.ConnectConfig(dctx, admin); err == nil {
			_, _ = c.Exec(dctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_ = c.Close(dctx)
		}
	}
	return url, drop, nil
}

// New returns a pool on a fresh database dropped when the test ends.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	url, drop, err := CreateDatabase(context.Background(), "vstest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
