package dbtest

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestMigratedClonesTheTemplate: migrations run once per key, every test
// gets its own copy of what they made, and one test's rows are not
// another's.
func TestMigratedClonesTheTemplate(t *testing.T) {
	var runs atomic.Int32
	migrate := func(ctx context.Context, pool *pgxpool.Pool) error {
		runs.Add(1)
		_, err := pool.Exec(ctx, "CREATE TABLE things (n int PRIMARY KEY)")
		return err
	}
	ctx := context.Background()
	a := Migrated(t, "dbtest_selftest", migrate)
	b := Migrated(t, "dbtest_selftest", migrate)
	if _, err := a.Exec(ctx, "INSERT INTO things VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRow(ctx, "SELECT count(*) FROM things").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("second clone sees %d rows of the first", n)
	}
	if got := runs.Load(); got != 1 {
		t.Fatalf("migrations ran %d times, want 1", got)
	}
}

// TestAbandonedTemplatesAreDropped: a template no running binary holds is
// dropped when a binary builds one, and this binary's own templates are not.
func TestAbandonedTemplatesAreDropped(t *testing.T) {
	ctx := context.Background()
	url, drop, err := CreateDatabase(ctx, "vstpl_abandoned")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	mine := Migrated(t, "dbtest_first", func(context.Context, *pgxpool.Pool) error { return nil })
	_ = Migrated(t, "dbtest_second", func(context.Context, *pgxpool.Pool) error { return nil })

	admin := mine.Config().ConnConfig.Copy()
	admin.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	exists := func(name string) bool {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	if exists(cfg.Database) {
		t.Fatalf("abandoned template %s was kept", cfg.Database)
	}
	for _, key := range []string{"dbtest_first", "dbtest_second"} {
		v, _ := templates.Load(key)
		if name := v.(*template).name; !exists(name) {
			t.Fatalf("this binary's template %s was dropped", name)
		}
	}
}
