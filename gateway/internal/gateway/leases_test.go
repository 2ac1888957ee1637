package gateway

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/redistest"
)

// perHour is a rate that refills nothing while a test runs.
const perHour = 1.0 / 3600

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func counter(name string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name})
}

// limitedHandler is one replica's rate-limited API answering 200.
func limitedHandler(l *leases, local *buckets, localBurst int, fallback prometheus.Counter) http.Handler {
	return rateLimit(l, local, localBurst, discardLog(), counter("limited"), fallback)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
}

func keyRequest(keyID string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/v1/credits", nil)
	return r.WithContext(context.WithValue(r.Context(), principalKey, principal.Principal{KeyID: keyID}))
}

// requireTooManyRequests checks the spec's 429: Retry-After in whole
// seconds, nothing remaining, the error body.
func requireTooManyRequests(t *testing.T, w *httptest.ResponseRecorder, maxWait int) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	wait, err := strconv.Atoi(w.Header().Get("Retry-After"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, wait, 1)
	require.LessOrEqual(t, wait, maxWait)
	require.Equal(t, "0", w.Header().Get("X-RateLimit-Remaining"))
	var body map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
	require.EqualValues(t, http.StatusTooManyRequests, body["statusCode"])
}

// Two replicas (two limiters on the same Redis) serving one key together
// from many clients allow exactly the key's burst: every request allowed
// was a token of the shared bucket, and once both replicas have refused,
// no reserved token is left unserved. Every refusal is the spec's 429.
func TestLeasedLimitHoldsAcrossReplicas(t *testing.T) {
	rdb := redistest.Client(t)
	for _, burst := range []int{3, 40, 1000} {
		t.Run(strconv.Itoa(burst), func(t *testing.T) {
			keyID := uuid.NewString()
			t.Cleanup(func() { rdb.Del(context.Background(), "vulnscan:ratelimit:tokens:"+keyID) })
			replicas := []http.Handler{
				limitedHandler(newLeases(rdb, perHour, burst), newBuckets(1, 1, 10), 1, counter("fallback")),
				limitedHandler(newLeases(rdb, perHour, burst), newBuckets(1, 1, 10), 1, counter("fallback")),
			}
			var allowed atomic.Int64
			var wg sync.WaitGroup
			for c := range 8 {
				wg.Go(func() {
					h := replicas[c%2]
					for {
						w := httptest.NewRecorder()
						h.ServeHTTP(w, keyRequest(keyID))
						if w.Code == http.StatusOK {
							allowed.Add(1)
							continue
						}
						requireTooManyRequests(t, w, 3600)
						return
					}
				})
			}
			wg.Wait()
			require.Equal(t, int64(burst), allowed.Load())
		})
	}
}

// A replica holding a lease makes another replica refuse early by at most
// the lease's unserved tokens (the documented tolerance), and those tokens
// go back to the shared bucket with the holder's next call once the lease
// has ended.
func TestLeaseToleranceAndReturn(t *testing.T) {
	rdb := redistest.Client(t)
	ctx := context.Background()
	key := "vulnscan:ratelimit:tokens:" + uuid.NewString()
	t.Cleanup(func() { rdb.Del(ctx, key) })
	const burst = 40
	now := time.Unix(1000, 0)
	a, b := newLeases(rdb, perHour, burst), newLeases(rdb, perHour, burst)
	a.now = func() time.Time { return now }
	require.Equal(t, 5, a.batch, "an eighth of the burst")

	ok, left, _, err := a.take(ctx, key)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, burst-1, left, "the shared bucket's 35 and the lease's 4")

	servedByB := 0
	for {
		ok, _, wait, err := b.take(ctx, key)
		require.NoError(t, err)
		if !ok {
			require.Greater(t, wait, time.Duration(0))
			break
		}
		servedByB++
	}
	require.Equal(t, burst-a.batch, servedByB, "refused early by the other lease's unserved tokens")

	now = now.Add(a.period) // a's lease has ended: its 4 tokens go back and it takes them again
	for range a.batch - 1 {
		ok, _, _, err := a.take(ctx, key)
		require.NoError(t, err)
		require.True(t, ok)
	}
	ok, _, _, err = a.take(ctx, key)
	require.NoError(t, err)
	require.False(t, ok, "exactly the burst was served in all")
}

// When Redis does not answer, each replica limits in process with the
// fallback limit (and says so in X-RateLimit-Limit), still answering 429
// with Retry-After once the fallback burst is spent.
func TestRateLimitFallsBackWhenRedisIsDown(t *testing.T) {
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { _ = down.Close() })
	fallback := counter("fallback")
	h := limitedHandler(newLeases(down, 20, 40), newBuckets(1, 2, 10), 2, fallback)
	keyID := uuid.NewString()
	for i := 1; i <= 2; i++ {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, keyRequest(keyID))
		require.Equal(t, http.StatusOK, w.Code, "request %d", i)
		require.Equal(t, "2", w.Header().Get("X-RateLimit-Limit"))
		require.Equal(t, strconv.Itoa(2-i), w.Header().Get("X-RateLimit-Remaining"))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, keyRequest(keyID))
	requireTooManyRequests(t, w, 1)
	require.InDelta(t, 3, testutil.ToFloat64(fallback), 0)

	// The shared limit applies again as soon as Redis answers.
	rdb := redistest.Client(t)
	t.Cleanup(func() { rdb.Del(context.Background(), "vulnscan:ratelimit:tokens:"+keyID) })
	s := &sharedLimit{shared: newLeases(down, 20, 40), local: newBuckets(1, 2, 10), log: discardLog()}
	_, _, _, inProcess := s.take(keyRequest(keyID), "vulnscan:ratelimit:tokens:"+keyID, keyID)
	require.True(t, inProcess)
	s.shared = newLeases(rdb, 20, 40)
	ok, left, _, inProcess := s.take(keyRequest(keyID), "vulnscan:ratelimit:tokens:"+keyID, keyID)
	require.False(t, inProcess)
	require.True(t, ok)
	require.Equal(t, 39, left)
}

// deadlineScripter answers the lease script with a lease of tokens and
// records whether each call's context had a deadline.
type deadlineScripter struct {
	redis.Scripter
	tokens    int64
	calls     int
	deadlines []time.Duration // left at each call; 0 without a deadline
}

func (d *deadlineScripter) EvalSha(ctx context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	d.calls++
	var left time.Duration
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	d.deadlines = append(d.deadlines, left)
	cmd := redis.NewCmd(ctx)
	cmd.SetVal([]any{d.tokens, int64(100), int64(0)})
	return cmd
}

// TestLeaseDeadlineOnlyOnScriptCalls: the call to Redis that takes a
// lease runs under the lease timeout whatever the request's context, and a
// request served from its lease calls nothing and allocates nothing.
func TestLeaseDeadlineOnlyOnScriptCalls(t *testing.T) {
	rdb := &deadlineScripter{tokens: 1000}
	s := &sharedLimit{shared: newLeases(rdb, 20, 40), local: newBuckets(1, 2, 10), log: discardLog()}
	r := keyRequest(uuid.NewString())
	ok, _, _, inProcess := s.take(r, "k", "k")
	require.True(t, ok)
	require.False(t, inProcess)
	require.Equal(t, 1, rdb.calls)
	require.Greater(t, rdb.deadlines[0], time.Duration(0), "the script call has no deadline")
	require.LessOrEqual(t, rdb.deadlines[0], redisTimeout)

	allocs := testing.AllocsPerRun(100, func() {
		if ok, _, _, _ := s.take(r, "k", "k"); !ok {
			t.Fatal("refused from a lease with tokens")
		}
	})
	require.Equal(t, 1, rdb.calls, "a request with a lease called Redis")
	require.Zero(t, allocs, "a request served from its lease allocates")
}
