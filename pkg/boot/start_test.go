package boot

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

var errMigration = errors.New("migration refused")

// emptyDatabase returns the URL of a new database dropped after the test.
func emptyDatabase(t *testing.T, prefix string) string {
	t.Helper()
	url, drop, err := dbtest.CreateDatabase(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	return url
}

func TestStartRunsMigrationsInOrder(t *testing.T) {
	ctx := context.Background()
	url := emptyDatabase(t, "vsboot")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")

	tests := []struct {
		name    string
		steps   []error // the result of each migration, in order
		wantRan int     // how many migrations ran
		wantErr bool
	}{
		{name: "none", steps: nil, wantRan: 0},
		{name: "all succeed", steps: []error{nil, nil, nil}, wantRan: 3},
		{name: "first fails", steps: []error{errMigration, nil}, wantRan: 1, wantErr: true},
		{name: "middle fails", steps: []error{nil, errMigration, nil}, wantRan: 2, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran []int
			var migs []Migration
			for i, res := range tt.steps {
				migs = append(migs, func(ctx context.Context, pool *pgxpool.Pool) error {
					if err := pool.Ping(ctx); err != nil {
						return err
					}
					ran = append(ran, i)
					return res
				})
			}
			pool, stop, err := Start(ctx, "boottest", "v0", url, migs...)
			if len(ran) != tt.wantRan {
				t.Errorf("ran %v, want %d migrations", ran, tt.wantRan)
			}
			for i, n := range ran {
				if n != i {
					t.Errorf("migrations ran in order %v", ran)
					break
				}
			}
			if tt.wantErr {
				if !errors.Is(err, errMigration) || !strings.HasPrefix(err.Error(), "migrate: ") {
					t.Fatalf("Start error = %v, want a migrate: error wrapping %v", err, errMigration)
				}
				if pool != nil || stop != nil {
					t.Fatal("Start returned a pool or stop function with an error")
				}
				return
			}
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			var one int
			if err := pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("query on the started pool: %d, %v", one, err)
			}
			stop()
			if err := pool.Ping(ctx); err == nil {
				t.Fatal("pool still usable after stop")
			}
		})
	}
}

// Queue creates River's tables in the schema it names, can run again, and
// serializes replicas that start together.
func TestQueueMigratesSchema(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, emptyDatabase(t, "vsqueue"))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	tableIn := func(schema string) bool {
		t.Helper()
		var ok bool
		if err := pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, schema+".river_job").Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}

	tests := []struct {
		name     string
		schema   string
		replicas int
	}{
		{"one replica", "queue_a", 1},
		{"replicas together", "queue_b", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := pool.Exec(ctx, "CREATE SCHEMA "+tt.schema); err != nil {
				t.Fatal(err)
			}
			if tableIn(tt.schema) {
				t.Fatalf("river_job exists in %s before migrating", tt.schema)
			}
			errs := make([]error, tt.replicas)
			var wg sync.WaitGroup
			for i := range tt.replicas {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = Queue(tt.schema)(ctx, pool)
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("replica %d: %v", i, err)
				}
			}
			if !tableIn(tt.schema) {
				t.Fatalf("river_job missing from %s after migrating", tt.schema)
			}
			if err := Queue(tt.schema)(ctx, pool); err != nil {
				t.Fatalf("second run: %v", err)
			}
			if tableIn("public") {
				t.Fatal("river_job created in public")
			}
		})
	}
}
