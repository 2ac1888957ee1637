package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/redistest"
)

// A fresh key's responses count down from the full burst: burst-1 after the
// first request, 0 after the last allowed one, and 0 on the refusal.
func TestRateLimitRemainingCountsFromTheFullBurst(t *testing.T) {
	rdb := redistest.Client(t)
	for _, tc := range []struct {
		name     string
		rate     float64 // per second
		burst    int
		requests int // counted down exactly; later ones could see a refill
	}{
		// The default 20:40: the first request leaves 39 whenever it runs.
		{"default limit, first request", 20, 40, 1},
		// One request an hour refills nothing while the test runs, so the
		// countdown is exact whatever the machine's speed.
		{"slow refill", 1.0 / 3600, 40, 41},
		{"burst of three", 1.0 / 3600, 3, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keyID := uuid.NewString()
			t.Cleanup(func() { rdb.Del(context.Background(), "vulnscan:ratelimit:tokens:"+keyID) })
			h := rateLimit(newLeases(rdb, tc.rate, tc.burst), newBuckets(1, 1, 10), 1, slog.New(slog.NewTextHandler(io.Discard, nil)),
				prometheus.NewCounter(prometheus.CounterOpts{Name: "x"}), prometheus.NewCounter(prometheus.CounterOpts{Name: "y"}))(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusOK)
			}))
			for i := 1; i <= tc.requests; i++ {
				r := httptest.NewRequest(http.MethodGet, "/v1/credits", nil)
				r = r.WithContext(context.WithValue(r.Context(), principalKey, principal.Principal{KeyID: keyID}))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				require.Equal(t, strconv.Itoa(tc.burst), w.Header().Get("X-RateLimit-Limit"))
				if i <= tc.burst {
					require.Equal(t, http.StatusOK, w.Code, "request %d", i)
					require.Equal(t, strconv.Itoa(tc.burst-i), w.Header().Get("X-RateLimit-Remaining"), "request %d", i)
				} else {
					require.Equal(t, http.StatusTooManyRequests, w.Code)
					require.Equal(t, "0", w.Header().Get("X-RateLimit-Remaining"))
				}
			}
		})
	}
}
