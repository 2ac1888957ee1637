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
	}
	c.RateRPS, c.RateBurst = rps, burst
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
