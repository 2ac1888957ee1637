package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// TestOpenAppliesSessionSettings: a pool from Open runs every connection
// with JIT compilation and parallel plans off, unless the URL sets them.
func TestOpenAppliesSessionSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, drop, err := dbtest.CreateDatabase(ctx, "vstest")
	require.NoError(t, err)
	t.Cleanup(drop)

	tests := []struct {
		name, url         string
		jit, parallelWork string
	}{
		{"default", url, "off", "0"},
		{"set by the url", url + "&jit=on&max_parallel_workers_per_gather=2", "on", "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool, err := db.Open(ctx, tt.url, 10*time.Second)
			require.NoError(t, err)
			defer pool.Close()
			// Every connection, not only the first.
			conns := make([]*pgx.Conn, 0, 3)
			for range 3 {
				c, err := pool.Acquire(ctx)
				require.NoError(t, err)
				defer c.Release()
				conns = append(conns, c.Conn())
			}
			for _, c := range conns {
				var jit, parallelWork string
				require.NoError(t, c.QueryRow(ctx, "SELECT current_setting('jit'), current_setting('max_parallel_workers_per_gather')").
					Scan(&jit, &parallelWork))
				require.Equal(t, tt.jit, jit)
				require.Equal(t, tt.parallelWork, parallelWork)
			}
		})
	}
}

// TestOpenTracesQueriesOnlyWhenExporting: queries get spans (otelpgx) only
// when spans are exported; otherwise the pool has no tracer to pay for.
func TestOpenTracesQueriesOnlyWhenExporting(t *testing.T) {
	ctx := context.Background()
	url, drop, err := dbtest.CreateDatabase(ctx, "vstest")
	require.NoError(t, err)
	t.Cleanup(drop)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	for _, exporting := range []bool{false, true} {
		endpoint := ""
		if exporting {
			endpoint = "http://127.0.0.1:1" // never dialled: no span is exported here
		}
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
		pool, err := db.Open(ctx, url, 10*time.Second)
		require.NoError(t, err)
		tracer := pool.Config().ConnConfig.Tracer
		pool.Close()
		if exporting {
			require.IsType(t, &otelpgx.Tracer{}, tracer)
		} else {
			require.Nil(t, tracer)
		}
	}
}
