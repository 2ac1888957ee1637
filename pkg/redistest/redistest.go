// Package redistest gives tests a client of the Redis server at REDIS_URL
// (the one `make test` provides). A test that cannot reach it fails; it
// never skips.
package redistest

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/vulnscan/vulnscan/pkg/config"
)

// URL is the test Redis server's URL: REDIS_URL, else the default one.
func URL() string {
	if url := os.Getenv("REDIS_URL"); url != "" {
		return url
	}
	return config.DefaultRedisURL
}

// Client returns a client of the test Redis server, closed when the test
// ends.
func Client(t testing.TB) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(URL())
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	rdb := redis.NewClient(opt)
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("Redis is required (run tests with make test): %v", err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}
