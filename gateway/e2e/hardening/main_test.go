// Package hardening attacks the running system where a hostile tenant or a
// failing store could hurt everyone: key lineage and revocation with Redis
// stopped, stalled uploads, key guessing, and Redis and PostgreSQL stopped
// and restarted under load. It runs the whole system on its own private
// redis-server and PostgreSQL cluster, which the tests stop and start, so
// its tests run one after another, in the order written.
package hardening

import (
	"fmt"
	"os"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var (
	sys *systest.System
	rds *systest.Redis
	pg  *systest.Postgres
)

// Budgets small enough to reach in a test.
const (
	authFailureBurst = 100
	fallbackBurst    = 10
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if rds, err = systest.StartRedis(); err != nil {
		fmt.Fprintln(os.Stderr, "hardening: private redis:", err)
		return 1
	}
	defer rds.Close()
	if pg, err = systest.StartPostgres(); err != nil {
		fmt.Fprintln(os.Stderr, "hardening: private postgres:", err)
		return 1
	}
	defer pg.Close()
	return systest.Run(m, systest.Options{DatabaseURL: pg.URL, RedisURL: rds.URL, Env: map[string]string{
		"VULNSCAN_RATE_LIMIT":          "200:400",
		"VULNSCAN_RATE_LIMIT_FALLBACK": fmt.Sprintf("5:%d", fallbackBurst),
		"VULNSCAN_AUTH_FAILURE_LIMIT":  fmt.Sprintf("1:%d", authFailureBurst),
		"VULNSCAN_KEY_CACHE_TTL":       "1s",
		"VULNSCAN_MAX_ACTIVE_KEYS":     "50",
		"VULNSCAN_BODY_RATE_WINDOW":    "1s",
		"VULNSCAN_BODY_MIN_RATE":       "1024",
		"VULNSCAN_UPLOADS_PER_KEY":     "2",
		"VULNSCAN_UPLOADS_PER_ORG":     "3",
		"VULNSCAN_UPLOADS_GLOBAL":      "4",
		// The fault test's load writes context documents as fast as it can;
		// the per-organization document quota has its own test.
		"SCAN_MAX_CONTEXT_DOCUMENTS": "100000",
	}}, &sys)
}
