package dbtest

import (
	"context"
	"sync/atomic"
	"testing"

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
