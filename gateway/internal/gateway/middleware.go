package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/vulnscan/vulnscan/gateway/internal/httperr"
	"github.com/vulnscan/vulnscan/gateway/internal/keyauth"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/principal"
)

// Messages fixed by the spec and CONTRACT.md.
const (
	msgSessionAuth  = "This endpoint requires API key authentication in the X-Api-Key header"
	msgMissingKey   = "Missing API key in the X-Api-Key header"
	msgMissingScope = "API key missing required scope: write"
)

type ctxKey int

const (
	principalKey ctxKey = iota
	bodyLimitKey
)

func principalFrom(ctx context.Context) (principal.Principal, bool) {
	p, ok := ctx.Value(principalKey).(principal.Principal)
	return p, ok
}

// statusRecorder remembers the status written.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// requestID accepts a sane X-Request-Id or makes one, and echoes it.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !requestIDPattern.MatchString(id) {
			id = uuid.NewString()
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(logging.WithRequestID(r.Context(), id)))
	})
}

// traceSlot carries the request's trace and span ids out of the tracing
// middleware, which runs inside the access log.
type traceSlot struct{ id, span string }

type traceSlotKey struct{}

// accessLog writes one line per request, never with headers or bodies,
// with the request id and the trace id of the request's span.
func accessLog(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w}
			slot := &traceSlot{}
			next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), traceSlotKey{}, slot)))
			if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
				return
			}
			attrs := []any{"method", r.Method, "path", r.URL.Path, "status", rec.status,
				"bytes", rec.bytes, "duration_ms", float64(time.Since(start).Microseconds()) / 1000, "remote", r.RemoteAddr}
			if slot.id != "" {
				attrs = append(attrs, "trace_id", slot.id, "span_id", slot.span)
			}
			log.InfoContext(r.Context(), "http", attrs...)
		})
	}
}

// recordTrace, inside the tracing middleware, stores the span's trace and
// span ids for the access log.
func recordTrace(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slot, ok := r.Context().Value(traceSlotKey{}).(*traceSlot); ok {
			if sc := trace.SpanContextFromContext(r.Context()); sc.IsValid() {
				slot.id, slot.span = sc.TraceID().String(), sc.SpanID().String()
			}
		}
		next.ServeHTTP(w, r)
	})
}

// authenticate resolves X-Api-Key into a principal for every /v1 request.
func authenticate(v *keyauth.Verifier, log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/v1/") && r.URL.Path != "/v1" {
				next.ServeHTTP(w, r)
				return
			}
			key := r.Header.Get("X-Api-Key")
			if key == "" {
				if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
					httperr.Write(w, http.StatusUnauthorized, msgSessionAuth)
				} else {
					httperr.Write(w, http.StatusUnauthorized, msgMissingKey)
				}
				return
			}
			e, err := v.Verify(r.Context(), key)
			switch msg := keyauth.Message(err); {
			case msg != "":
				httperr.Write(w, http.StatusUnauthorized, msg)
				return
			case err != nil:
				log.ErrorContext(r.Context(), "key verification failed", "error", err.Error())
				httperr.Write(w, http.StatusServiceUnavailable, "Authentication is temporarily unavailable; retry later")
				return
			}
			p := principal.Principal{OrgID: e.OrgID, UserID: e.UserID, KeyID: e.KeyID, Scopes: e.Scopes}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey, p)))
		})
	}
}

// requireScope enforces read for GET and HEAD and write for everything else.
func requireScope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := principalFrom(r.Context())
		if ok {
			need := principal.ScopeWrite
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				need = principal.ScopeRead
			}
			if !p.Has(need) {
				if need == principal.ScopeWrite {
					httperr.Write(w, http.StatusForbidden, msgMissingScope)
				} else {
					httperr.Write(w, http.StatusForbidden, "API key missing required scope: read")
				}
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// rateLimit applies the per-key GCRA limit shared by every replica through Redis.
func rateLimit(l *redis_rate.Limiter, limit redis_rate.Limit, log *slog.Logger, limited prometheus.Counter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := principalFrom(r.Context())
			if !ok {
				next.ServeHTTP(w, r)
				return
			}
			res, err := l.Allow(r.Context(), "vulnscan:ratelimit:"+p.KeyID, limit)
			if err != nil {
				// Fail open: an unavailable limiter must not take the API down.
				log.WarnContext(r.Context(), "rate limiter unavailable", "error", err.Error())
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("X-RateLimit-Limit", strconv.Itoa(limit.Burst))
			w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(remaining(limit, res)))
			if res.Allowed == 0 {
				limited.Inc()
				w.Header().Set("Retry-After", strconv.Itoa(int(math.Max(1, math.Ceil(res.RetryAfter.Seconds())))))
				httperr.Write(w, http.StatusTooManyRequests, "Rate limit exceeded; retry after the time in Retry-After")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// remaining is what is left of the burst after an allowed request. The
// limiter's own Remaining is truncated from a float difference of two
// timestamps near 3e8 seconds, so a fresh key's first request reads burst-2.
// The reset time (how far the key's theoretical arrival time is ahead of now)
// carries the same information exactly enough: every emission interval of it
// is one request of the burst in use.
func remaining(limit redis_rate.Limit, res *redis_rate.Result) int {
	if res.Allowed == 0 || limit.Rate <= 0 {
		return 0
	}
	interval := float64(limit.Period) / float64(limit.Rate)
	used := math.Ceil(float64(res.ResetAfter)/interval - 1e-6)
	return max(0, min(limit.Burst, limit.Burst-int(used)))
}

// limitedBody caps a request body and records that the cap was hit, so that
// the error handler answers 413 instead of a decoding error.
type limitedBody struct {
	rc  io.ReadCloser
	hit *bool
}

func (b limitedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		*b.hit = true
	}
	return n, err
}

func (b limitedBody) Close() error { return b.rc.Close() }

func limitBodies(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		max := max
		if r.URL.Path == uploadPath {
			max = MaxUploadBody
		}
		if r.ContentLength > max {
			httperr.Write(w, http.StatusRequestEntityTooLarge, "Request body too large")
			return
		}
		hit := new(bool)
		r.Body = limitedBody{rc: http.MaxBytesReader(w, r.Body, max), hit: hit}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bodyLimitKey, hit)))
	})
}

func bodyLimitHit(ctx context.Context) bool {
	hit, _ := ctx.Value(bodyLimitKey).(*bool)
	return hit != nil && *hit
}
