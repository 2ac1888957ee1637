package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/vulnscan/vulnscan/gateway/internal/httperr"
	"github.com/vulnscan/vulnscan/gateway/internal/keyauth"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/principal"
)

// Messages the public API promises word for word.
const (
	msgSessionAuth  = "This endpoint requires API key authentication in the X-Api-Key header"
	msgMissingKey   = "Missing API key in the X-Api-Key header"
	msgMissingScope = "API key missing required scope: write"
)

type ctxKey int

const (
	principalKey ctxKey = iota
	bodyLimitKey
	bodySlowKey
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

// maxClientRequestID bounds the client's X-Request-Id kept for the log.
const maxClientRequestID = 64

// requestID gives every request an id the gateway generates itself, echoed
// in X-Request-Id and carried to the services. A client's X-Request-Id is
// never adopted, since it would let anyone forge log correlation across
// tenants; it is only recorded in the access log as client_request_id, cut
// to 64 characters from a safe alphabet (see clientRequestID). The same
// context carries the HTTP method for the forward-response option.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := uuid.NewString()
		w.Header().Set("X-Request-Id", id)
		ctx := logging.WithRequestID(context.WithValue(r.Context(), requestMethodKey{}, r.Method), id)
		if c := clientRequestID(r.Header.Get("X-Request-Id")); c != "" {
			ctx = context.WithValue(ctx, clientRequestIDKey{}, c)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

type clientRequestIDKey struct{}

// clientRequestID keeps letters, digits and ._:- of a client's request id,
// at most maxClientRequestID of them, so that it cannot inject log syntax.
func clientRequestID(v string) string {
	var b strings.Builder
	for _, c := range v {
		if b.Len() >= maxClientRequestID {
			break
		}
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:-", c)) {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// untrustedTraceHeaders are the inbound trace context headers. The gateway
// is a public endpoint: it starts a new root span for every request
// (recording a valid inbound traceparent only as a span link) and drops
// these headers so that nothing downstream can adopt a client's trace id,
// sampling decision, trace state or baggage.
var untrustedTraceHeaders = []string{"Traceparent", "Tracestate", "Baggage", "Uber-Trace-Id", "X-B3-Traceid", "X-B3-Spanid", "X-B3-Sampled", "B3", "X-Cloud-Trace-Context"}

// dropTraceHeaders removes untrustedTraceHeaders.
func dropTraceHeaders(h http.Header) {
	for _, k := range untrustedTraceHeaders {
		delete(h, k)
	}
}

// accessLog traces every request and writes one line for it, never with
// headers or bodies, with the request id and the trace and span ids of the
// request's span (added by the logger from the context). Health checks get
// neither a span nor a line.
//
// Each request is a new root span named "<method> <path>"; the client's
// traceparent, when valid, becomes a link, and only W3C trace context is
// read for it. The span's attributes are set only when it is recorded (an
// exporter is configured and the sampler kept it). Request counts and
// latencies are the gateway's own Prometheus metrics (httpMetrics), so the
// tracing records none.
func accessLog(log *slog.Logger, tracer trace.Tracer) func(http.Handler) http.Handler {
	link := propagation.TraceContext{}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var opts [3]trace.SpanStartOption
			opts[0], opts[1] = trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindServer)
			n := 2
			if r.Header.Get("Traceparent") != "" {
				if sc := trace.SpanContextFromContext(link.Extract(context.Background(), propagation.HeaderCarrier(r.Header))); sc.IsValid() {
					opts[n] = trace.WithLinks(trace.Link{SpanContext: sc})
					n++
				}
			}
			dropTraceHeaders(r.Header)
			if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
				next.ServeHTTP(w, r)
				return
			}
			start := time.Now()
			// httpMetrics, outside, already records the status and size.
			rec, ok := w.(*statusRecorder)
			if !ok {
				rec = &statusRecorder{ResponseWriter: w}
			}
			ctx, span := tracer.Start(r.Context(), r.Method+" "+r.URL.Path, opts[:n]...)
			recording := span.IsRecording()
			if recording {
				span.SetAttributes(semconv.HTTPRequestMethodKey.String(r.Method), semconv.URLPath(r.URL.Path),
					semconv.ServerAddress(r.Host), semconv.ClientAddress(clientAddr(r)), semconv.UserAgentOriginal(r.UserAgent()))
			}
			next.ServeHTTP(rec, r.WithContext(ctx))
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			if recording {
				span.SetAttributes(semconv.HTTPResponseStatusCode(status))
				if status >= http.StatusInternalServerError {
					span.SetStatus(codes.Error, "")
				}
			}
			span.End()
			// Typed attributes, not key-value arguments (no boxing, no
			// argument slice), handed to the handler as a record without a
			// caller (the access line has no source location to look up).
			attrs := [7]slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", rec.status),
				slog.Int("bytes", rec.bytes), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
				slog.String("remote", r.RemoteAddr)}
			na := 6
			if c, ok := r.Context().Value(clientRequestIDKey{}).(string); ok {
				attrs[na] = slog.String("client_request_id", c)
				na++
			}
			if h := log.Handler(); h.Enabled(ctx, slog.LevelInfo) {
				line := slog.NewRecord(time.Now(), slog.LevelInfo, "http", 0)
				line.AddAttrs(attrs[:na]...)
				_ = h.Handle(ctx, line)
			}
		})
	}
}

// msgAuthFailures answers a client address over its failed-authentication
// budget.
const msgAuthFailures = "Too many failed authentication attempts; retry after the time in Retry-After"

// clientAddr is the address failed authentications are counted by: the
// TCP peer. Forwarding headers are not trusted, since any client can set
// them; behind a proxy every client shares the proxy's budget.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// authenticate resolves X-Api-Key into a principal for every /v1 request.
// A client address whose failed authentications (unknown, revoked or
// expired keys) exceeded its budget is answered 429 before any lookup, so
// guessing keys costs the auth service and its database at most that
// budget; a key this replica already holds as active still passes, since it
// costs nothing to check.
func authenticate(v *keyauth.Verifier, failures *buckets, log *slog.Logger, limited prometheus.Counter) func(http.Handler) http.Handler {
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
			addr := clientAddr(r)
			if over, wait := failures.empty(addr); over && !v.Active(key) {
				limited.Inc()
				w.Header().Set("Retry-After", strconv.Itoa(retryAfter(wait)))
				httperr.Write(w, http.StatusTooManyRequests, msgAuthFailures)
				return
			}
			e, err := v.Verify(r.Context(), key)
			switch msg := keyauth.Message(err); {
			case msg != "":
				if !errors.Is(err, keyauth.ErrMalformed) { // malformed keys cost no lookup
					failures.take(addr)
				}
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

// rateLimit applies the per-key limit shared by every replica through
// Redis (see leases). When Redis does not answer, each replica applies the
// fallback limit (per key, in process) instead: the API stays up without
// ever letting everything through. Both paths set X-RateLimit-Limit and
// X-RateLimit-Remaining, and Retry-After on a 429.
func rateLimit(l *leases, local *buckets, localBurst int, log *slog.Logger, limited, fallback prometheus.Counter) func(http.Handler) http.Handler {
	shared := &sharedLimit{shared: l, local: local, log: log, warning: "rate limiter unavailable; limiting in process"}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := principalFrom(r.Context())
			if !ok {
				next.ServeHTTP(w, r)
				return
			}
			allowed, left, wait, inProcess := shared.take(r, "vulnscan:ratelimit:tokens:"+p.KeyID, p.KeyID)
			burst := l.burst
			if inProcess {
				fallback.Inc()
				burst = localBurst
			}
			h := w.Header()
			h["X-Ratelimit-Limit"] = []string{strconv.Itoa(burst)}
			h["X-Ratelimit-Remaining"] = []string{strconv.Itoa(left)}
			if !allowed {
				tooManyRequests(w, wait, limited)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// sharedLimit is a limit shared by every replica through Redis, with an
// in-process fallback per key when Redis does not answer, so the API stays
// up without ever letting everything through.
type sharedLimit struct {
	shared   *leases
	local    *buckets
	log      *slog.Logger
	warning  string
	lastWarn atomic.Int64
}

// take spends one request of redisKey's shared limit, or of localKey's
// in-process bucket when Redis fails (inProcess). It says whether the
// request is allowed, what is left of the burst, and how long to wait.
func (s *sharedLimit) take(r *http.Request, redisKey, localKey string) (allowed bool, left int, wait time.Duration, inProcess bool) {
	allowed, left, wait, err := s.shared.take(r.Context(), redisKey)
	if err == nil {
		return allowed, left, wait, false
	}
	if now := time.Now().Unix(); s.lastWarn.Swap(now) != now { // at most one line a second
		s.log.WarnContext(r.Context(), s.warning, "error", err.Error())
	}
	allowed, left, wait = s.local.take(localKey)
	return allowed, left, wait, true
}

// tooManyRequests answers 429 with Retry-After and counts it.
func tooManyRequests(w http.ResponseWriter, wait time.Duration, limited prometheus.Counter) {
	limited.Inc()
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter(wait)))
	httperr.Write(w, http.StatusTooManyRequests, "Rate limit exceeded; retry after the time in Retry-After")
}

// redisTimeout bounds a rate-limit call to Redis on the request path.
const redisTimeout = 300 * time.Millisecond

// limitedBody caps a request body and records that the cap was hit, so that
// the error handler answers 413 instead of a decoding error.
type limitedBody struct {
	rc  io.ReadCloser
	hit *bool
}

func (b limitedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			*b.hit = true
		}
	}
	return n, err
}

func (b limitedBody) Close() error { return b.rc.Close() }

// bodyRate is the slowest request body accepted: at least min bytes in
// every window.
type bodyRate struct {
	window time.Duration
	min    int64
}

// limitBodies caps request bodies in size and, for requests that carry a
// body, in slowness (see minRateBody): a body cut for its rate is answered
// 408 by whoever reads it.
func limitBodies(max int64, rate bodyRate, cut prometheus.Counter, next http.Handler) http.Handler {
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
		var body io.ReadCloser = limitedBody{rc: http.MaxBytesReader(w, r.Body, max), hit: hit}
		slow := new(bool)
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			body = newMinRateBody(body, w, rate.window, rate.min, slow)
		}
		r.Body = body
		ctx := context.WithValue(r.Context(), bodyLimitKey, hit)
		ctx = context.WithValue(ctx, bodySlowKey, slow)
		next.ServeHTTP(w, r.WithContext(ctx))
		if *slow {
			cut.Inc()
		}
	})
}

// bodyTooSlow reports whether the request's body was cut for its rate.
func bodyTooSlow(ctx context.Context) bool {
	slow, _ := ctx.Value(bodySlowKey).(*bool)
	return slow != nil && *slow
}

func bodyLimitHit(ctx context.Context) bool {
	hit, _ := ctx.Value(bodyLimitKey).(*bool)
	return hit != nil && *hit
}
