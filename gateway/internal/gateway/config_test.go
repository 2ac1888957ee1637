package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/proto/gen/openapi"
)

func TestParseRateLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in         string
		rps, burst int
		ok         bool
	}{
		{"20:40", 20, 40, true},
		{" 5 : 7 ", 5, 7, true},
		{"1:1", 1, 1, true},
		{"20", 0, 0, false},
		{"0:40", 0, 0, false},
		{"20:0", 0, 0, false},
		{"-1:5", 0, 0, false},
		{"a:b", 0, 0, false},
		{"20:40:60", 0, 0, false},
		{"", 0, 0, false},
	} {
		rps, burst, err := ParseRateLimit(tc.in)
		if !tc.ok {
			require.ErrorContains(t, err, "must be rps:burst with positive integers", "%q", tc.in)
			continue
		}
		require.NoError(t, err, "%q", tc.in)
		require.Equal(t, [2]int{tc.rps, tc.burst}, [2]int{rps, burst}, "%q", tc.in)
	}
}

var gatewayEnv = []string{"VULNSCAN_HTTP_ADDR", "METRICS_ADDR", "REDIS_URL", "AUTH_GRPC_ADDR", "ESTIMATION_GRPC_ADDR", "SCAN_GRPC_ADDR",
	"FINDINGS_GRPC_ADDR", "VULNSCAN_KEY_CACHE_TTL", "SHUTDOWN_GRACE", "VULNSCAN_RATE_LIMIT", "VULNSCAN_RATE_LIMIT_FALLBACK",
	"VULNSCAN_AUTH_FAILURE_LIMIT", "VULNSCAN_KEY_CACHE_SIZE", "VULNSCAN_HEADER_TIMEOUT", "VULNSCAN_BODY_MIN_RATE",
	"VULNSCAN_BODY_RATE_WINDOW", "VULNSCAN_UPLOADS_PER_KEY", "VULNSCAN_UPLOADS_PER_ORG", "VULNSCAN_UPLOADS_GLOBAL"}

// readConfig reads the gateway's configuration from exactly vars.
func readConfig(t *testing.T, vars map[string]string) (Config, error) {
	t.Helper()
	for _, k := range gatewayEnv {
		t.Setenv(k, vars[k])
	}
	return ReadConfig(config.FromOS())
}

func TestReadConfigDefaults(t *testing.T) {
	c, err := readConfig(t, nil)
	require.NoError(t, err)
	require.Equal(t, Config{
		HTTPAddr: config.DefaultHTTPAddr, MetricsAddr: "127.0.0.1:9090", RedisURL: config.DefaultRedisURL,
		AuthAddr: config.DefaultAuthAddr, EstimationAddr: config.DefaultEstimationAddr, ScanAddr: config.DefaultScanAddr,
		FindingsAddr: config.DefaultFindingsAddr, RateRPS: 20, RateBurst: 40, KeyLocalTTL: 2 * time.Second, ShutdownGrace: 10 * time.Second,
		FallbackRPS: 10, FallbackBurst: 20, AuthFailPerMinute: 60, AuthFailBurst: 20, KeyCacheSize: 100000,
		HeaderTimeout: 10 * time.Second, BodyMinRate: 16 << 10, BodyRateWindow: 10 * time.Second,
		UploadsPerKey: 2, UploadsPerOrg: 4, UploadsGlobal: 32,
	}, c)
}

// The fallback limit defaults to half the shared one, rounded up and at
// least 1; an explicit one wins.
func TestReadConfigFallbackLimit(t *testing.T) {
	for _, tc := range []struct {
		rate, fallback string
		rps, burst     int
	}{
		{"5:9", "", 3, 5},
		{"1:1", "", 1, 1},
		{"100:200", "", 50, 100},
		{"100:200", "7:8", 7, 8},
	} {
		c, err := readConfig(t, map[string]string{"VULNSCAN_RATE_LIMIT": tc.rate, "VULNSCAN_RATE_LIMIT_FALLBACK": tc.fallback})
		require.NoError(t, err)
		require.Equal(t, [2]int{tc.rps, tc.burst}, [2]int{c.FallbackRPS, c.FallbackBurst}, "%s %s", tc.rate, tc.fallback)
	}
}

func TestReadConfigRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		err  string
	}{
		{"rate limit", map[string]string{"VULNSCAN_RATE_LIMIT": "fast"}, `VULNSCAN_RATE_LIMIT: "fast"`},
		{"fallback", map[string]string{"VULNSCAN_RATE_LIMIT_FALLBACK": "0:1"}, "VULNSCAN_RATE_LIMIT_FALLBACK"},
		{"auth failures", map[string]string{"VULNSCAN_AUTH_FAILURE_LIMIT": "60"}, "VULNSCAN_AUTH_FAILURE_LIMIT"},
		{"cache size", map[string]string{"VULNSCAN_KEY_CACHE_SIZE": "0"}, "VULNSCAN_KEY_CACHE_SIZE must be a positive integer"},
		{"uploads per key", map[string]string{"VULNSCAN_UPLOADS_PER_KEY": "-1"}, "VULNSCAN_UPLOADS_PER_KEY must be a positive integer"},
		{"header timeout", map[string]string{"VULNSCAN_HEADER_TIMEOUT": "-1s"}, "must be positive durations"},
		{"body window", map[string]string{"VULNSCAN_BODY_RATE_WINDOW": "0s"}, "must be positive durations"},
		{"not a duration", map[string]string{"SHUTDOWN_GRACE": "soon"}, `SHUTDOWN_GRACE: "soon" is not a duration`},
	} {
		_, err := readConfig(t, tc.vars)
		require.ErrorContains(t, err, tc.err, tc.name)
	}
	// Every problem is reported at once.
	_, err := readConfig(t, map[string]string{"VULNSCAN_KEY_CACHE_SIZE": "0", "VULNSCAN_UPLOADS_GLOBAL": "0"})
	require.ErrorContains(t, err, "VULNSCAN_KEY_CACHE_SIZE")
	require.ErrorContains(t, err, "VULNSCAN_UPLOADS_GLOBAL")
}

// httpMetrics counts every answer by route template (never the raw path),
// bounded method and status, including answers written before routing.
func TestHTTPMetricsLabels(t *testing.T) {
	t.Parallel()
	routes, err := newRouteTable(openapi.JSON, map[string][]string{uploadPath: {http.MethodPost}})
	require.NoError(t, err)
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "requests"}, []string{"route", "method", "status"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "latency"}, []string{"route", "method"})
	h := httpMetrics(routes, requests, latency)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/credits":
			_, _ = w.Write([]byte("{}"))
		case "/v1/scans/0b9f/findings":
			w.WriteHeader(http.StatusUnauthorized)
		default:
			// nothing written: an implicit 200
		}
	}))
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/v1/credits"},
		{http.MethodGet, "/v1/credits"},
		{http.MethodGet, "/v1/scans/0b9f/findings"},
		{"BREW", "/v1/credits"},
		{http.MethodGet, "/v1/no/such/route/x"},
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(r.method, r.path, nil))
	}
	for _, tc := range []struct {
		labels []string
		want   float64
	}{
		{[]string{"/v1/credits", "GET", "200"}, 2},
		{[]string{"/v1/scans/{id}/findings", "GET", "401"}, 1},
		{[]string{"/v1/credits", "OTHER", "200"}, 1},
		{[]string{unmatchedRoute, "GET", "200"}, 1},
	} {
		require.InDelta(t, tc.want, testutil.ToFloat64(requests.WithLabelValues(tc.labels...)), 0, "%v", tc.labels)
	}
	require.Equal(t, 4, testutil.CollectAndCount(requests), "no label set beyond these")
	require.Equal(t, 4, testutil.CollectAndCount(latency), "one series per route and method")
}
