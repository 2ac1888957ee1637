package db_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

func countRows(t *testing.T, p *pgxpool.Pool, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, p.QueryRow(context.Background(), query, args...).Scan(&n))
	return n
}

func TestOpenCreatesAMissingDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, drop, err := dbtest.CreateDatabase(ctx, "vsopen")
	require.NoError(t, err)
	drop() // Open must create it again
	t.Cleanup(drop)

	p, err := db.Open(ctx, url, 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	var name string
	require.NoError(t, p.QueryRow(ctx, "SELECT current_database()").Scan(&name))
	cfg, err := pgx.ParseConfig(url)
	require.NoError(t, err)
	require.Equal(t, cfg.Database, name)

	// A second Open of the now existing database just connects.
	again, err := db.Open(ctx, url, 10*time.Second)
	require.NoError(t, err)
	again.Close()
}

func TestOpenFailures(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		url     string
		wait    time.Duration
		wantErr string
	}{
		{name: "unparsable url", ctx: context.Background(), url: "postgres://%zz", wantErr: "parse database url"},
		// Nothing listens on port 1: Open retries until wait has passed.
		{name: "server not answering", ctx: context.Background(), url: "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=2",
			wait: 700 * time.Millisecond, wantErr: "connect to database"},
		{name: "cancelled", ctx: cancelled, url: "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=2",
			wait: time.Minute, wantErr: "connect to database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := db.Open(tc.ctx, tc.url, tc.wait)
			require.Nil(t, p)
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestInTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := dbtest.New(t)
	_, err := p.Exec(ctx, `CREATE TABLE items (id int PRIMARY KEY CONSTRAINT items_positive CHECK (id > 0))`)
	require.NoError(t, err)
	_, err = p.Exec(ctx, `CREATE TABLE refs (item int REFERENCES items (id) DEFERRABLE INITIALLY DEFERRED)`)
	require.NoError(t, err)
	insert := func(id int) func(pgx.Tx) error {
		return func(tx pgx.Tx) error { _, err := tx.Exec(ctx, "INSERT INTO items VALUES ($1)", id); return err }
	}
	errOwn := errors.New("changed my mind")

	for _, tc := range []struct {
		name      string
		id        int
		fn        func(pgx.Tx) error
		wantErr   error
		errSubstr string
		committed bool
	}{
		{name: "commit", id: 1, fn: insert(1), committed: true},
		{name: "fn error rolls back", id: 2, fn: func(tx pgx.Tx) error {
			if err := insert(2)(tx); err != nil {
				return err
			}
			return errOwn
		}, wantErr: errOwn},
		{name: "statement error", id: -3, fn: insert(-3), errSubstr: "items_positive"},
		{name: "deferred constraint fails at commit", id: 4, fn: func(tx pgx.Tx) error {
			if err := insert(4)(tx); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO refs VALUES (999)")
			return err
		}, errSubstr: "commit:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := db.InTx(ctx, p, tc.fn)
			switch {
			case tc.wantErr != nil:
				require.ErrorIs(t, err, tc.wantErr)
			case tc.errSubstr != "":
				require.ErrorContains(t, err, tc.errSubstr)
			default:
				require.NoError(t, err)
			}
			want := 0
			if tc.committed {
				want = 1
			}
			require.Equal(t, want, countRows(t, p, "SELECT count(*) FROM items WHERE id = $1", tc.id))
		})
	}

	t.Run("panic rolls back and the connection is reusable", func(t *testing.T) {
		func() {
			defer func() { require.Equal(t, "boom", recover()) }()
			_ = db.InTx(ctx, p, func(tx pgx.Tx) error {
				if err := insert(5)(tx); err != nil {
					return err
				}
				panic("boom")
			})
		}()
		require.Zero(t, countRows(t, p, "SELECT count(*) FROM items WHERE id = 5"))
		require.NoError(t, db.InTx(ctx, p, insert(6)))
		require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM items WHERE id = 6"))
	})

	t.Run("unique violation", func(t *testing.T) {
		err := db.InTx(ctx, p, insert(1))
		require.True(t, db.IsUniqueViolation(err, ""))
		require.True(t, db.IsUniqueViolation(err, "items_pkey"))
		require.False(t, db.IsUniqueViolation(err, "other_key"))
		require.False(t, db.IsUniqueViolation(errors.New("duplicate"), ""))
		require.False(t, db.IsUniqueViolation(nil, ""))
	})

	t.Run("begin fails on a closed pool", func(t *testing.T) {
		closed := dbtest.New(t)
		closed.Close()
		called := false
		err := db.InTx(ctx, closed, func(pgx.Tx) error { called = true; return nil })
		require.ErrorContains(t, err, "begin:")
		require.False(t, called)
	})
}

func TestMigrateOrderAndIncrements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := dbtest.New(t)
	// Listed out of order and across directories: 0010 needs 0002's table
	// and 0002 needs 0001's; files other than *.up.sql are ignored.
	files := fstest.MapFS{
		"b/0010_seed.up.sql":    {Data: []byte("INSERT INTO widgets (kind) VALUES ('seed')")},
		"a/0002_widgets.up.sql": {Data: []byte("CREATE TABLE widgets (id serial PRIMARY KEY, kind text REFERENCES kinds (name))")},
		"0001_kinds.up.sql":     {Data: []byte("CREATE TABLE kinds (name text PRIMARY KEY); INSERT INTO kinds VALUES ('seed'), ('late')")},
		"0001_kinds.down.sql":   {Data: []byte("DROP TABLE kinds")},
		"README.md":             {Data: []byte("not a migration")},
		"b/0003_nothing.up.sql": {Data: []byte("SELECT 1")},
	}
	migrate := db.Migrations("svc_order", files)
	require.NoError(t, migrate(ctx, p))

	rows, err := p.Query(ctx, "SELECT version, name FROM svc_order.schema_migrations ORDER BY applied_at, version")
	require.NoError(t, err)
	type rec struct {
		V    int
		Name string
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[rec])
	require.NoError(t, err)
	require.Equal(t, []rec{{1, "0001_kinds.up.sql"}, {2, "0002_widgets.up.sql"}, {3, "0003_nothing.up.sql"}, {10, "0010_seed.up.sql"}}, got)
	require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM svc_order.widgets"))

	// Running again applies nothing; a new file applies alone.
	require.NoError(t, migrate(ctx, p))
	require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM svc_order.widgets"))
	files["0011_more.up.sql"] = &fstest.MapFile{Data: []byte("INSERT INTO widgets (kind) VALUES ('late')")}
	require.NoError(t, db.Migrate(ctx, p, "svc_order", files))
	require.Equal(t, 2, countRows(t, p, "SELECT count(*) FROM svc_order.widgets"))
	require.Equal(t, 5, countRows(t, p, "SELECT count(*) FROM svc_order.schema_migrations"))

	// Schemas are separate: the same files apply again to another schema.
	require.NoError(t, db.Migrate(ctx, p, "svc_other", files))
	require.Equal(t, 2, countRows(t, p, "SELECT count(*) FROM svc_other.widgets"))
}

func TestMigrateRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := dbtest.New(t)
	for i, tc := range []struct {
		name    string
		files   fstest.MapFS
		wantErr string
	}{
		{name: "unnumbered", files: fstest.MapFS{"0001_a.up.sql": {Data: []byte("SELECT 1")}, "init.up.sql": {Data: []byte("SELECT 1")}},
			wantErr: "migration init.up.sql: name must start with a number"},
		{name: "duplicate numbers in different directories", files: fstest.MapFS{"x/0004_a.up.sql": {Data: []byte("SELECT 1")}, "y/0004_b.up.sql": {Data: []byte("SELECT 1")}},
			wantErr: "share the number 4"},
		{name: "failing statement", files: fstest.MapFS{
			"0001_ok.up.sql":  {Data: []byte("CREATE TABLE t (id int)")},
			"0002_bad.up.sql": {Data: []byte("INSERT INTO missing_table VALUES (1)")},
		}, wantErr: "migration 0002_bad.up.sql"},
		{name: "extensions named by a migration in a transaction", files: fstest.MapFS{
			"0001_ix.up.sql": {Data: []byte("-- an index\n-- migrate: with extensions pg_trgm\nCREATE TABLE t (id int)")},
		}, wantErr: "migration 0001_ix.up.sql: extensions are named only by a migration without transaction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := fmt.Sprintf("svc_refuse_%d", i)
			err := db.Migrate(ctx, p, schema, tc.files)
			require.ErrorContains(t, err, tc.wantErr)
			// Nothing is left half applied: the whole run is one transaction.
			require.Zero(t, countRows(t, p, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema))
		})
	}
}

func TestMigrateConcurrentMigratorsApplyOnce(t *testing.T) {
	t.Parallel()
	p := dbtest.New(t)
	// Each migration records one row; a migration applied twice would
	// record two (or fail on the CREATE TABLE).
	files := fstest.MapFS{
		"0001_log.up.sql": {Data: []byte("CREATE TABLE applied (version int NOT NULL, by_pid int NOT NULL DEFAULT pg_backend_pid())")},
	}
	for v := 2; v <= 6; v++ {
		files[fmt.Sprintf("%04d_step.up.sql", v)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("INSERT INTO applied (version) VALUES (%d)", v))}
	}
	migrateAtOnce(t, p, "svc_race", files, 6)
	require.Equal(t, 5, countRows(t, p, "SELECT count(*) FROM svc_race.applied"))
	require.Equal(t, 5, countRows(t, p, "SELECT count(DISTINCT version) FROM svc_race.applied"))
	require.Equal(t, 1, countRows(t, p, "SELECT count(DISTINCT by_pid) FROM svc_race.applied"), "one replica applied everything")
	require.Equal(t, 6, countRows(t, p, "SELECT count(*) FROM svc_race.schema_migrations"))
}

// TestMigrateWithoutTransaction: a file marked to run without a transaction
// builds its indexes concurrently between the transactions of the files
// around it; one whose build failed part way leaves an invalid index and
// is not recorded, and the next run drops that index and builds it anew
// rather than skipping it for its name.
func TestMigrateWithoutTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := dbtest.New(t)
	files := fstest.MapFS{
		"0001_t.up.sql": {Data: []byte("CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t SELECT g, g % 5 FROM generate_series(1, 100) g")},
		"0002_indexes.up.sql": {Data: []byte(`-- migrate: without transaction
-- Two indexes, built without blocking writes.
CREATE INDEX CONCURRENTLY IF NOT EXISTS t_id_v ON t (id, v);

CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS t_v
    ON t (v);
`)},
		"0003_after.up.sql": {Data: []byte("INSERT INTO t VALUES (1000, 1000)")},
	}
	valid := func(index string) (exists, ok bool) {
		err := p.QueryRow(ctx, `SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'svc_notx' AND c.relname = $1`, index).Scan(&ok)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, false
		}
		require.NoError(t, err)
		return true, ok
	}
	// v holds duplicates: the unique index's concurrent build fails and
	// leaves it invalid; the file is not recorded, the one before it is.
	err := db.Migrate(ctx, p, "svc_notx", files)
	require.ErrorContains(t, err, "migration 0002_indexes.up.sql")
	exists, ok := valid("t_v")
	require.True(t, exists)
	require.False(t, ok, "the failed build leaves an invalid index")
	exists, ok = valid("t_id_v")
	require.True(t, exists && ok)
	require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM svc_notx.schema_migrations"))

	// With the duplicates gone, the next run rebuilds the index and goes on.
	_, err = p.Exec(ctx, "DELETE FROM svc_notx.t WHERE id > 5")
	require.NoError(t, err)
	require.NoError(t, db.Migrate(ctx, p, "svc_notx", files))
	exists, ok = valid("t_v")
	require.True(t, exists && ok, "the index is built anew, valid")
	require.Equal(t, 3, countRows(t, p, "SELECT count(*) FROM svc_notx.schema_migrations"))
	require.Equal(t, 6, countRows(t, p, "SELECT count(*) FROM svc_notx.t"))
}

// TestMigrateWithExtensions: a file without transaction that names the
// extensions it uses creates them when the role may (here a superuser) and
// builds with their operator classes; one naming an extension the server
// does not have is skipped without being recorded, at every start, and the
// files after it apply.
func TestMigrateWithExtensions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := dbtest.New(t)
	files := fstest.MapFS{
		"0001_t.up.sql": {Data: []byte("CREATE TABLE t (org int NOT NULL, body text NOT NULL); INSERT INTO t SELECT g % 3, 'text ' || g FROM generate_series(1, 100) g")},
		"0002_trgm.up.sql": {Data: []byte(`-- migrate: without transaction
-- migrate: with extensions pg_trgm, btree_gin
CREATE INDEX CONCURRENTLY IF NOT EXISTS t_org_trgm ON t USING gin (org, body gin_trgm_ops);
`)},
		"0003_missing.up.sql": {Data: []byte(`-- migrate: without transaction
-- migrate: with extensions pg_trgm, vulnscan_no_such_extension
CREATE INDEX CONCURRENTLY IF NOT EXISTS t_never ON t (org);
`)},
		"0004_after.up.sql": {Data: []byte("INSERT INTO t VALUES (7, 'after')")},
	}
	require.NoError(t, db.Migrate(ctx, p, "svc_ext", files))
	indexes := func() []string {
		rows, err := p.Query(ctx, "SELECT indexname FROM pg_indexes WHERE schemaname = 'svc_ext' AND tablename = 't' ORDER BY 1")
		require.NoError(t, err)
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return names
	}
	require.Equal(t, []string{"t_org_trgm"}, indexes())
	require.Equal(t, 2, countRows(t, p, "SELECT count(*) FROM pg_extension WHERE extname IN ('pg_trgm', 'btree_gin')"))
	require.Equal(t, 3, countRows(t, p, "SELECT count(*) FROM svc_ext.schema_migrations"))
	require.Zero(t, countRows(t, p, "SELECT count(*) FROM svc_ext.schema_migrations WHERE version = 3"))
	require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM svc_ext.t WHERE body = 'after'"))
	// The next start tries the skipped file again, and applies nothing twice.
	require.NoError(t, db.Migrate(ctx, p, "svc_ext", files))
	require.Equal(t, 3, countRows(t, p, "SELECT count(*) FROM svc_ext.schema_migrations"))
	require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM svc_ext.t WHERE body = 'after'"))

	// The index serves a lookup by both columns.
	tx, err := p.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, "SET LOCAL enable_seqscan = off")
	require.NoError(t, err)
	rows, err := tx.Query(ctx, "EXPLAIN SELECT * FROM svc_ext.t WHERE org = 1 AND body LIKE '%xt 4%'")
	require.NoError(t, err)
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, strings.Join(plan, "\n"), "t_org_trgm")
}

// TestMigrateConcurrentMigratorsWithoutTransaction: replicas starting at
// once while one of them builds an index concurrently neither deadlock
// (a waiting replica holds no snapshot the build would wait for) nor apply
// anything twice.
func TestMigrateConcurrentMigratorsWithoutTransaction(t *testing.T) {
	t.Parallel()
	p := dbtest.New(t)
	files := fstest.MapFS{
		"0001_t.up.sql":   {Data: []byte("CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t SELECT g, g FROM generate_series(1, 20000) g")},
		"0002_ix.up.sql":  {Data: []byte("-- migrate: without transaction\nCREATE INDEX CONCURRENTLY IF NOT EXISTS t_v ON t (v);\n")},
		"0003_log.up.sql": {Data: []byte("CREATE TABLE applied (by_pid int NOT NULL DEFAULT pg_backend_pid()); INSERT INTO applied DEFAULT VALUES")},
	}
	migrateAtOnce(t, p, "svc_notx_race", files, 6)
	require.Equal(t, 1, countRows(t, p, "SELECT count(*) FROM svc_notx_race.applied"))
	require.Equal(t, 3, countRows(t, p, "SELECT count(*) FROM svc_notx_race.schema_migrations"))
}

// migrateAtOnce migrates schema from as many goroutines as replicas at
// once, as replicas starting together do, and requires each to succeed.
func migrateAtOnce(t *testing.T, p *pgxpool.Pool, schema string, files fstest.MapFS, replicas int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	for i := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Migrate(context.Background(), p, schema, files)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "replica %d", i)
	}
}
