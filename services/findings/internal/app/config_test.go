package app

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/services/findings/internal/webhook"
)

func TestReadConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := ReadConfig(config.FromMap(nil))
	require.NoError(t, err)
	require.Equal(t, "findings", c.Service)
	require.Equal(t, "127.0.0.1:9204", c.MetricsAddr)
	require.Equal(t, c.FindingsAddr, c.GRPCListen, "the service listens on its own address")
	require.NotEmpty(t, c.AdminListen, "findings serves an admin API")
	require.Equal(t, time.Second, c.DeliveryPoll)
	require.Equal(t, 5*time.Second, c.DeliveryBackoff)
	require.Equal(t, time.Hour, c.DeliveryMaxBackoff)
	require.Equal(t, 12, c.DeliveryMaxAttempts)
	require.Equal(t, 30*time.Second, c.RiskExpiryEvery)
	require.Equal(t, runtime.GOMAXPROCS(0), c.IntakeConcurrency, "as many reports at once as the process has CPUs")
	require.Equal(t, WebhookConfig{MaxPerOrg: webhook.DefaultMaxPerOrg, Poll: time.Second, Backoff: 30 * time.Second, MaxBackoff: 4 * time.Hour, MaxAttempts: 12}, c.Webhooks)
	require.Equal(t, "http://"+config.DefaultHTTPAddr, c.PublicURL)
}

func TestReadConfigOverrides(t *testing.T) {
	t.Parallel()
	c, err := ReadConfig(config.FromMap(map[string]string{
		"VULNSCAN_PUBLIC_URL":            "https://vulnscan.example.com",
		"VULNSCAN_ALLOWED_PRIVATE_CIDRS": " 10.0.0.0/8, ,192.168.1.0/24",
		"FINDINGS_MAX_WEBHOOKS":          "3",
		"FINDINGS_WEBHOOK_BACKOFF":       "1m",
		"FINDINGS_WEBHOOK_MAX_BACKOFF":   "1m",
		"FINDINGS_DELIVERY_MAX_ATTEMPTS": "2",
		"FINDINGS_INTAKE_CONCURRENCY":    "6",
		"FINDINGS_DATABASE_URL":          "postgres://findings@db/findings",
		"DATABASE_URL":                   "postgres://shared@db/shared",
	}))
	require.NoError(t, err)
	require.Equal(t, "https://vulnscan.example.com", c.PublicURL)
	require.Equal(t, []string{"10.0.0.0/8", "192.168.1.0/24"}, c.AllowedPrivateCIDRs)
	require.Equal(t, 3, c.Webhooks.MaxPerOrg)
	require.Equal(t, time.Minute, c.Webhooks.MaxBackoff)
	require.Equal(t, 2, c.DeliveryMaxAttempts)
	require.Equal(t, 6, c.IntakeConcurrency)
	require.Equal(t, "postgres://findings@db/findings", c.DatabaseURL, "the service's own database URL wins")
}

// TestReadConfigRefuses: each invalid setting is reported by name.
func TestReadConfigRefuses(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"public url scheme":    {map[string]string{"VULNSCAN_PUBLIC_URL": "ftp://x"}, "VULNSCAN_PUBLIC_URL must be an http or https URL"},
		"public url host":      {map[string]string{"VULNSCAN_PUBLIC_URL": "https://"}, "VULNSCAN_PUBLIC_URL must be an http or https URL"},
		"no webhooks":          {map[string]string{"FINDINGS_MAX_WEBHOOKS": "0"}, "FINDINGS_MAX_WEBHOOKS and FINDINGS_WEBHOOK_MAX_ATTEMPTS must be at least 1"},
		"webhook backoff":      {map[string]string{"FINDINGS_WEBHOOK_BACKOFF": "5h"}, "FINDINGS_WEBHOOK_MAX_BACKOFF at least the backoff"},
		"risk expiry":          {map[string]string{"FINDINGS_RISK_EXPIRY_EVERY": "0s"}, "FINDINGS_RISK_EXPIRY_EVERY must be positive"},
		"delivery poll":        {map[string]string{"FINDINGS_DELIVERY_POLL": "-1s"}, "FINDINGS_DELIVERY_POLL and FINDINGS_DELIVERY_BACKOFF must be positive"},
		"delivery max backoff": {map[string]string{"FINDINGS_DELIVERY_MAX_BACKOFF": "1s"}, "FINDINGS_DELIVERY_MAX_BACKOFF at least the backoff"},
		"count fold":           {map[string]string{"FINDINGS_COUNT_FOLD_EVERY": "0s"}, "FINDINGS_COUNT_FOLD_EVERY must be positive"},
		"intake":               {map[string]string{"FINDINGS_INTAKE_CONCURRENCY": "0"}, "FINDINGS_INTAKE_CONCURRENCY must be at least 1"},
		"attempts":             {map[string]string{"FINDINGS_DELIVERY_MAX_ATTEMPTS": "0"}, "FINDINGS_DELIVERY_MAX_ATTEMPTS must be at least 1"},
		"not an int":           {map[string]string{"FINDINGS_MAX_WEBHOOKS": "many"}, `FINDINGS_MAX_WEBHOOKS: "many" is not an integer`},
		"not a duration":       {map[string]string{"FINDINGS_WEBHOOK_POLL": "often"}, `FINDINGS_WEBHOOK_POLL: "often" is not a duration`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadConfig(config.FromMap(tc.env))
			require.ErrorContains(t, err, tc.want)
		})
	}
}
