// Package readiness checks that /readyz follows the stores the services
// need: it answers 503 while their database refuses connections.
package readiness

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	os.Exit(systest.Run(m, systest.Options{}, &sys))
}

func readyz() int {
	resp, err := http.Get("http://" + sys.HTTPAddr + "/readyz")
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func TestReadyzFollowsTheDatabase(t *testing.T) {
	require.Equal(t, 200, readyz())
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(sys.DatabaseURL)
	require.NoError(t, err)
	// administer through the server's maintenance database: the default
	// database of DATABASE_URL need not exist on a fresh server
	adminCfg, err := pgx.ParseConfig(dbtest.ServerURL())
	require.NoError(t, err)
	adminCfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(ctx, adminCfg)
	require.NoError(t, err)
	defer func() { _ = admin.Close(ctx) }()
	name := pgx.Identifier{cfg.Database}.Sanitize()

	// Take the database away from the services.
	_, err = admin.Exec(ctx, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS false")
	require.NoError(t, err)
	defer func() { _, _ = admin.Exec(ctx, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS true") }()
	_, err = admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", cfg.Database)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return readyz() == 503 }, 20*time.Second, 100*time.Millisecond,
		"readyz must report the database outage")

	_, err = admin.Exec(ctx, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS true")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return readyz() == 200 }, 20*time.Second, 100*time.Millisecond,
		"readyz must recover with the database")
}
