package redisconn

import (
	"context"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/redistest"
)

// The tests use the Redis server at REDIS_URL that `make test` provides
// (see redistest), touching only keys of their own.
var live = redistest.URL()

func TestOpenTalksToTheServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, err := Open(ctx, live, 5*time.Second)
	require.NoError(t, err)
	defer func() { _ = rdb.Close() }()
	key := "vulnscan:test:redisconn:" + t.Name()
	require.NoError(t, rdb.Set(ctx, key, "v", time.Minute).Err())
	t.Cleanup(func() { _ = rdb.Del(context.Background(), key).Err() })
	got, err := rdb.Get(ctx, key).Result()
	require.NoError(t, err)
	require.Equal(t, "v", got)
}

func TestOpenFailsFastSettingsAndKeepsURLValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		url         string
		retries     int
		dialTimeout time.Duration
		db          int
	}{
		{"defaults fail fast", live, 1, 2 * time.Second, liveDB(t)},
		{"the URL's values are kept", liveWith(t, "/3", "max_retries=4&dial_timeout=7s"), 4, 7 * time.Second, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb, err := Open(context.Background(), tc.url, 5*time.Second)
			require.NoError(t, err)
			defer func() { _ = rdb.Close() }()
			opt := rdb.Options()
			require.Equal(t, tc.retries, opt.MaxRetries)
			require.Equal(t, tc.dialTimeout, opt.DialTimeout)
			require.Equal(t, tc.db, opt.DB)
		})
	}
}

func TestOpenRefusesABadURL(t *testing.T) {
	t.Parallel()
	for _, url := range []string{"", "http://127.0.0.1:6379", "redis://127.0.0.1:6379/notadb", "127.0.0.1:6379"} {
		_, err := Open(context.Background(), url, 0)
		require.ErrorContains(t, err, "parse redis url", "%q", url)
	}
}

// liveDB is the database number of the live server's URL.
func liveDB(t *testing.T) int {
	t.Helper()
	opt, err := redis.ParseURL(live)
	require.NoError(t, err)
	return opt.DB
}

// liveWith is the live server's URL with another path (database) and query.
func liveWith(t *testing.T, path, query string) string {
	t.Helper()
	u, err := url.Parse(live)
	require.NoError(t, err)
	u.Path, u.RawQuery = path, query
	return u.String()
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func TestOpenGivesUpOnAnUnreachableServer(t *testing.T) {
	t.Parallel()
	addr := closedPort(t)
	// No wait: one attempt, then the error.
	_, err := Open(context.Background(), "redis://"+addr+"/0", 0)
	require.ErrorContains(t, err, "connect to redis")

	// A cancelled context ends the waiting however long it was to be.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Open(ctx, "redis://"+addr+"/0", time.Hour)
	require.ErrorContains(t, err, "connect to redis")
}
