// Package config reads process configuration from environment variables.
// Every variable has a default that works for `make run`; parse errors are
// collected so that a process reports all of them at once and refuses to start.
package config

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Defaults shared by every process, so that binaries started without
// configuration find each other and their stores on loopback.
const (
	DefaultHTTPAddr       = "127.0.0.1:8080"
	DefaultDatabaseURL    = "postgres://postgres@127.0.0.1:5432/vulnscan?sslmode=disable"
	DefaultRedisURL       = "redis://127.0.0.1:6379/0"
	DefaultDataDir        = ".data"
	DefaultAuthAddr       = "127.0.0.1:9101"
	DefaultEstimationAddr = "127.0.0.1:9102"
	DefaultScanAddr       = "127.0.0.1:9103"
	DefaultFindingsAddr   = "127.0.0.1:9104"
	// Admin APIs listen on their own ports, reachable by the operator
	// identity only.
	DefaultAuthAdminAddr     = "127.0.0.1:9301"
	DefaultFindingsAdminAddr = "127.0.0.1:9304"
)

// Env reads variables and remembers the first problem with each.
type Env struct {
	lookup func(string) (string, bool)
	errs   []error
}

// FromOS reads the process environment.
func FromOS() *Env { return &Env{lookup: os.LookupEnv} }

// FromMap reads a fixed map, for tests.
func FromMap(m map[string]string) *Env {
	return &Env{lookup: func(k string) (string, bool) { v, ok := m[k]; return v, ok }}
}

// String returns the variable or def when it is unset or empty.
func (e *Env) String(name, def string) string {
	if v, ok := e.lookup(name); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

// Int returns the variable parsed as an integer.
func (e *Env) Int(name string, def int) int {
	v := e.String(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s: %q is not an integer", name, v))
		return def
	}
	return n
}

// Duration returns the variable parsed by time.ParseDuration.
func (e *Env) Duration(name string, def time.Duration) time.Duration {
	v := e.String(name, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s: %q is not a duration", name, v))
		return def
	}
	return d
}

// List returns a comma-separated variable as trimmed, non-empty items.
func (e *Env) List(name string) []string {
	var out []string
	for _, p := range strings.Split(e.String(name, ""), ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Fail records a validation problem found by the caller.
func (e *Env) Fail(err error) { e.errs = append(e.errs, err) }

// Err returns every problem found so far, or nil.
func (e *Env) Err() error { return errors.Join(e.errs...) }

// DatabaseURL returns the service's own database URL (e.g. AUTH_DATABASE_URL)
// or the shared DATABASE_URL.
func (e *Env) DatabaseURL(service string) string {
	return e.String(strings.ToUpper(service)+"_DATABASE_URL", e.String("DATABASE_URL", DefaultDatabaseURL))
}

// Common holds the settings every service process shares.
type Common struct {
	Service        string
	GRPCListen     string
	MetricsAddr    string
	DatabaseURL    string
	RedisURL       string
	DataDir        string
	AuthAddr       string
	EstimationAddr string
	ScanAddr       string
	FindingsAddr   string
	// AdminListen is where the service's admin API listens (empty for a
	// service without one): ADMIN_LISTEN_ADDR, default its NAME_ADMIN_GRPC_ADDR.
	AdminListen   string
	ShutdownGrace time.Duration
}

// ReadCommon reads the settings of service name, whose own gRPC address
// variable is NAME_GRPC_ADDR with default ownAddr and whose metrics listen on
// METRICS_ADDR (default metricsDef).
func ReadCommon(e *Env, name, metricsDef string) Common {
	c := Common{
		Service:        name,
		MetricsAddr:    e.String("METRICS_ADDR", metricsDef),
		DatabaseURL:    e.DatabaseURL(name),
		RedisURL:       e.String("REDIS_URL", DefaultRedisURL),
		DataDir:        e.String("VULNSCAN_DATA_DIR", DefaultDataDir),
		AuthAddr:       e.String("AUTH_GRPC_ADDR", DefaultAuthAddr),
		EstimationAddr: e.String("ESTIMATION_GRPC_ADDR", DefaultEstimationAddr),
		ScanAddr:       e.String("SCAN_GRPC_ADDR", DefaultScanAddr),
		FindingsAddr:   e.String("FINDINGS_GRPC_ADDR", DefaultFindingsAddr),
		ShutdownGrace:  e.Duration("SHUTDOWN_GRACE", 20*time.Second),
	}
	own := map[string]string{"auth": c.AuthAddr, "estimation": c.EstimationAddr, "scan": c.ScanAddr, "findings": c.FindingsAddr}[name]
	c.GRPCListen = e.String("GRPC_LISTEN_ADDR", own)
	if admin := map[string]string{"auth": e.String("AUTH_ADMIN_GRPC_ADDR", DefaultAuthAdminAddr),
		"findings": e.String("FINDINGS_ADMIN_GRPC_ADDR", DefaultFindingsAdminAddr)}[name]; admin != "" {
		c.AdminListen = e.String("ADMIN_LISTEN_ADDR", admin)
	}
	return c
}
