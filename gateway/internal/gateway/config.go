package gateway

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/principal"
)

// Config is the gateway process configuration.
type Config struct {
	HTTPAddr       string
	MetricsAddr    string
	RedisURL       string
	AuthAddr       string
	EstimationAddr string
	ScanAddr       string
	FindingsAddr   string
	RateRPS        int
	RateBurst      int
	KeyLocalTTL    time.Duration
	ShutdownGrace  time.Duration

	// FallbackRPS and FallbackBurst are the per-key limit each replica
	// applies on its own while Redis is unavailable.
	FallbackRPS, FallbackBurst int
	// AuthFailPerMinute and AuthFailBurst bound failed authentications
	// (unknown, revoked or expired keys) per client address, counted
	// before any lookup.
	AuthFailPerMinute, AuthFailBurst int
	// KeyCacheSize bounds each replica's in-process key cache (LRU).
	KeyCacheSize int
	// HeaderTimeout bounds reading request headers; BodyMinRate (bytes per
	// second) over BodyRateWindow is the slowest body the gateway accepts.
	HeaderTimeout  time.Duration
	BodyMinRate    int
	BodyRateWindow time.Duration
	// Concurrent upload caps per key, per organization and per replica.
	UploadsPerKey, UploadsPerOrg, UploadsGlobal int

	// Identity is the gateway's certificate on the internal plane and Signer
	// its key for the tenant identities it asserts to the services.
	Identity *mtls.Identity
	Signer   *principal.Signer
}

// ReadConfig reads the configuration from env.
func ReadConfig(env *config.Env) (Config, error) {
	c := Config{
		HTTPAddr:       env.String("VULNSCAN_HTTP_ADDR", config.DefaultHTTPAddr),
		MetricsAddr:    env.String("METRICS_ADDR", "127.0.0.1:9090"),
		RedisURL:       env.String("REDIS_URL", config.DefaultRedisURL),
		AuthAddr:       env.String("AUTH_GRPC_ADDR", config.DefaultAuthAddr),
		EstimationAddr: env.String("ESTIMATION_GRPC_ADDR", config.DefaultEstimationAddr),
		ScanAddr:       env.String("SCAN_GRPC_ADDR", config.DefaultScanAddr),
		FindingsAddr:   env.String("FINDINGS_GRPC_ADDR", config.DefaultFindingsAddr),
		KeyLocalTTL:    env.Duration("VULNSCAN_KEY_CACHE_TTL", 2*time.Second),
		ShutdownGrace:  env.Duration("SHUTDOWN_GRACE", 10*time.Second),
	}
	rps, burst, err := ParseRateLimit(env.String("VULNSCAN_RATE_LIMIT", "20:40"))
	if err != nil {
		env.Fail(err)
		rps, burst = 1, 1
	}
	c.RateRPS, c.RateBurst = rps, burst
	// Without Redis each replica limits alone; half the shared limit keeps
	// two replicas within it and one replica well inside it.
	fb := env.String("VULNSCAN_RATE_LIMIT_FALLBACK", fmt.Sprintf("%d:%d", max(1, (rps+1)/2), max(1, (burst+1)/2)))
	if c.FallbackRPS, c.FallbackBurst, err = ParseRateLimit(fb); err != nil {
		env.Fail(fmt.Errorf("VULNSCAN_RATE_LIMIT_FALLBACK: %q must be rps:burst with positive integers", fb))
	}
	af := env.String("VULNSCAN_AUTH_FAILURE_LIMIT", "60:20")
	if c.AuthFailPerMinute, c.AuthFailBurst, err = ParseRateLimit(af); err != nil {
		env.Fail(fmt.Errorf("VULNSCAN_AUTH_FAILURE_LIMIT: %q must be per-minute:burst with positive integers", af))
	}
	c.KeyCacheSize = env.Int("VULNSCAN_KEY_CACHE_SIZE", 100000)
	c.HeaderTimeout = env.Duration("VULNSCAN_HEADER_TIMEOUT", 10*time.Second)
	c.BodyMinRate = env.Int("VULNSCAN_BODY_MIN_RATE", 16<<10)
	c.BodyRateWindow = env.Duration("VULNSCAN_BODY_RATE_WINDOW", 10*time.Second)
	c.UploadsPerKey = env.Int("VULNSCAN_UPLOADS_PER_KEY", 2)
	c.UploadsPerOrg = env.Int("VULNSCAN_UPLOADS_PER_ORG", 4)
	c.UploadsGlobal = env.Int("VULNSCAN_UPLOADS_GLOBAL", 32)
	for name, v := range map[string]int{"VULNSCAN_KEY_CACHE_SIZE": c.KeyCacheSize, "VULNSCAN_BODY_MIN_RATE": c.BodyMinRate,
		"VULNSCAN_UPLOADS_PER_KEY": c.UploadsPerKey, "VULNSCAN_UPLOADS_PER_ORG": c.UploadsPerOrg, "VULNSCAN_UPLOADS_GLOBAL": c.UploadsGlobal} {
		if v < 1 {
			env.Fail(fmt.Errorf("%s must be a positive integer", name))
		}
	}
	if c.HeaderTimeout <= 0 || c.BodyRateWindow <= 0 {
		env.Fail(fmt.Errorf("VULNSCAN_HEADER_TIMEOUT and VULNSCAN_BODY_RATE_WINDOW must be positive durations"))
	}
	return c, env.Err()
}

// ParseRateLimit parses "rps:burst".
func ParseRateLimit(s string) (rps, burst int, err error) {
	a, b, ok := strings.Cut(s, ":")
	rps, err1 := strconv.Atoi(strings.TrimSpace(a))
	burst, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || rps < 1 || burst < 1 {
		return 0, 0, fmt.Errorf("VULNSCAN_RATE_LIMIT: %q must be rps:burst with positive integers", s)
	}
	return rps, burst, nil
}
