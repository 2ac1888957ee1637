// Package dbtest gives integration tests a database of their own on the
// PostgreSQL server at DATABASE_URL (the one `make test` provides). A test
// that cannot reach the server fails; it never skips.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/db"
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
	return createDatabase(ctx, prefix, "")
}

// createDatabase creates a database named with prefix, a copy of template
// when template is not empty.
func createDatabase(ctx context.Context, prefix, template string) (string, func(), error) {
	cfg, admin, err := serverConfig()
	if err != nil {
		return "", nil, err
	}
	name := prefix + "_" + randomSuffix()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, admin)
	if err != nil {
		return "", nil, fmt.Errorf("connect to the test PostgreSQL server (run tests with make test): %w", err)
	}
	defer func() { _ = conn.Close(cctx) }()
	stmt := "CREATE DATABASE " + name
	if template != "" {
		stmt += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if _, err := conn.Exec(cctx, stmt); err != nil {
		return "", nil, fmt.Errorf("create test database: %w", err)
	}
	u := cfg.Copy()
	u.Database = name
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.ConnectConfig(dctx, admin); err == nil {
			_, _ = c.Exec(dctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_ = c.Close(dctx)
		}
	}
	return databaseURL(u), drop, nil
}

// serverConfig is the test server's connection settings, and the same
// pointed at its maintenance database "postgres", where databases are
// created and dropped.
func serverConfig() (cfg, admin *pgx.ConnConfig, err error) {
	cfg, err = pgx.ParseConfig(ServerURL())
	if err != nil {
		return nil, nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	admin = cfg.Copy()
	admin.Database = "postgres"
	return cfg, admin, nil
}

// randomSuffix makes a database name unique.
func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// databaseURL is the URL of the database cfg names.
func databaseURL(cfg *pgx.ConnConfig) string {
	if cfg.Password != "" {
		return fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Password, cfg.Host, cfg.Port, cfg.Database)
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

// Pool opens a pool on url with the settings the services' connections
// run with (db.Configure).
func Pool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	db.Configure(cfg.ConnConfig)
	return pgxpool.NewWithConfig(ctx, cfg)
}

// New returns a pool on a fresh database dropped when the test ends.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	url, drop, err := CreateDatabase(context.Background(), "vstest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	pool, err := Pool(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// templates holds, per key, the migrated template database this test binary
// clones for each test.
var templates sync.Map // key -> *template

type template struct {
	once sync.Once
	name string
	err  error
}

// owner is this test binary's connection to the server's maintenance
// database. It holds a session advisory lock on each template the binary
// built, for as long as the binary runs: the lock is how other binaries
// tell a live template from one its builder left behind when it exited.
var owner struct {
	sync.Mutex
	conn  *pgx.Conn
	built map[string]bool // templates this binary made (session locks are re-entrant)
}

// Migrated returns a pool on a fresh database that already holds what
// migrate puts there, dropped when the test ends. The first call for a key
// in a test binary builds a template database for the key and runs migrate
// on it once; every call then clones the template with CREATE DATABASE …
// TEMPLATE, which takes a fraction of the time migrations take. This is the
// fast unit layer for stores: each test gets a database of its own, so tests
// run in parallel and see no other test's rows.
//
// Each test binary builds its own templates, named after the key and a
// random suffix, so binaries that run at once (several packages sharing a
// store's helper, or two checkouts on one server) never see each other's
// migrations. Templates whose binary has exited are dropped by the next
// binary that builds one. key must be a lower-case identifier.
func Migrated(t testing.TB, key string, migrate func(context.Context, *pgxpool.Pool) error) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	v, _ := templates.LoadOrStore(key, &template{name: "vstpl_" + key + "_" + randomSuffix()})
	tpl := v.(*template)
	tpl.once.Do(func() { tpl.err = buildTemplate(ctx, tpl.name, migrate) })
	if tpl.err != nil {
		t.Fatalf("template database %s: %v", tpl.name, tpl.err)
	}
	url, drop, err := createDatabase(ctx, "vstest", tpl.name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	pool, err := Pool(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// templateLock is the advisory lock that marks the template name as in use.
func templateLock(name string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("vulnscan-dbtest-template:" + name))
	return int64(h.Sum64() >> 1)
}

// buildTemplate takes the lock of name, drops the templates no running
// binary holds, then creates name and migrates it. Connections to the new
// database are closed before it returns: PostgreSQL refuses to copy a
// template that has sessions.
func buildTemplate(ctx context.Context, name string, migrate func(context.Context, *pgxpool.Pool) error) error {
	cfg, admin, err := serverConfig()
	if err != nil {
		return err
	}
	owner.Lock()
	defer owner.Unlock()
	if owner.conn == nil {
		if owner.conn, err = pgx.ConnectConfig(ctx, admin); err != nil {
			return fmt.Errorf("connect to the test PostgreSQL server (run tests with make test): %w", err)
		}
	}
	conn := owner.conn
	if owner.built == nil {
		owner.built = map[string]bool{}
	}
	owner.built[name] = true
	// The lock comes before the database, so another binary never sees
	// this template unlocked.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", templateLock(name)); err != nil {
		return fmt.Errorf("template lock: %w", err)
	}
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'vstpl\_%' AND datname <> $1`, name)
	if err != nil {
		return fmt.Errorf("list templates: %w", err)
	}
	others, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list templates: %w", err)
	}
	for _, other := range others {
		if owner.built[other] {
			continue
		}
		var free bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", templateLock(other)).Scan(&free); err != nil {
			return fmt.Errorf("template lock: %w", err)
		}
		if !free {
			continue
		}
		_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{other}.Sanitize()+" WITH (FORCE)")
		_, _ = conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", templateLock(other))
		if err != nil {
			return fmt.Errorf("drop abandoned template %s: %w", other, err)
		}
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("create template: %w", err)
	}
	u := cfg.Copy()
	u.Database = name
	pcfg, err := pgxpool.ParseConfig(databaseURL(u))
	if err != nil {
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return err
	}
	err = migrate(ctx, pool)
	pool.Close()
	if err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	return nil
}
