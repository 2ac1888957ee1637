// Package gateway is the REST front door: grpc-gateway turns the services'
// HTTP rules into the /v1 JSON surface, behind the gateway's own middleware
// (request id → access log → tracing → API key → scope → rate limit).
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/vulnscan/vulnscan/gateway/internal/httperr"
	"github.com/vulnscan/vulnscan/gateway/internal/keyauth"
	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/server"
	"github.com/vulnscan/vulnscan/proto/gen/openapi"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
)

// MaxJSONBody bounds JSON request bodies.
const MaxJSONBody = 2 << 20

// Gateway is the assembled HTTP handler with its dependencies.
type Gateway struct {
	Handler  http.Handler
	Verifier *keyauth.Verifier
	Registry *prometheus.Registry

	conns   map[string]*grpc.ClientConn
	rdb     *redis.Client
	log     *slog.Logger
	uploads *uploadSlots

	cutBodies, uploadsFull prometheus.Counter

	readyMu  sync.Mutex
	readyAt  time.Time
	readyErr error
}

// New connects to the services and Redis and builds the handler.
func New(ctx context.Context, cfg Config, rdb *redis.Client, log *slog.Logger) (*Gateway, error) {
	g := &Gateway{conns: map[string]*grpc.ClientConn{}, rdb: rdb, log: log, Registry: prometheus.NewRegistry()}
	g.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for name, addr := range map[string]string{"auth": cfg.AuthAddr, "estimation": cfg.EstimationAddr, "scan": cfg.ScanAddr, "findings": cfg.FindingsAddr} {
		unary := []grpc.UnaryClientInterceptor{signUnary(cfg.Signer)}
		if name == "auth" { // where keys are revoked
			unary = append(unary, forgetOnRevoke(func(org string) { g.Verifier.ForgetOrganization(org) }))
		}
		cc, err := server.Dial(addr, cfg.Identity, name,
			grpc.WithChainUnaryInterceptor(unary...), grpc.WithChainStreamInterceptor(signStream(cfg.Signer)))
		if err != nil {
			g.Close()
			return nil, err
		}
		g.conns[name] = cc
	}
	g.Verifier = keyauth.New(rdb, authv1.NewAuthInternalServiceClient(g.conns["auth"]), log, cfg.KeyLocalTTL, cfg.KeyCacheSize)
	g.uploads = newUploadSlots(cfg.UploadsPerKey, cfg.UploadsPerOrg, cfg.UploadsGlobal)

	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "http_requests_total", Help: "HTTP requests by route, method and status."}, []string{"route", "method", "code"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "http_request_duration_seconds", Help: "HTTP latency by route.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"route", "method"})
	limited := prometheus.NewCounter(prometheus.CounterOpts{Name: "http_rate_limited_total", Help: "Requests refused by the per-key rate limit."})
	authLimited := prometheus.NewCounter(prometheus.CounterOpts{Name: "gateway_auth_failures_limited_total", Help: "Requests refused before any key lookup because their client address exceeded its failed-authentication budget."})
	fallback := prometheus.NewCounter(prometheus.CounterOpts{Name: "gateway_rate_limit_fallback_total", Help: "Requests rate limited in process because Redis was unavailable."})
	cutBodies := prometheus.NewCounter(prometheus.CounterOpts{Name: "gateway_slow_bodies_cut_total", Help: "Request bodies cut for arriving below the minimum rate."})
	uploadsFull := prometheus.NewCounter(prometheus.CounterOpts{Name: "gateway_uploads_refused_total", Help: "Uploads refused with 429 because a concurrency cap was full."})
	g.Registry.MustRegister(requests, latency, limited, authLimited, fallback, cutBodies, uploadsFull)
	g.cutBodies, g.uploadsFull = cutBodies, uploadsFull
	g.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gateway_uploads_in_progress", Help: "Uploads holding a concurrency slot."},
		func() float64 { return float64(g.uploads.inProgress()) }))
	for source, n := range map[string]*atomic.Int64{"local": &g.Verifier.Stats.LocalHits, "redis": &g.Verifier.Stats.RedisHits, "auth": &g.Verifier.Stats.AuthLookups} {
		g.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "gateway_key_lookups_total", Help: "API key checks by where they were answered (auth means a database query).",
			ConstLabels: prometheus.Labels{"source": source},
		}, func() float64 { return float64(n.Load()) }))
	}

	marshaler := newFastJSON(gatewayJSON())
	mux := newRuntimeMux(marshaler, g.serviceError)
	if err := authv1.RegisterAuthServiceHandler(ctx, mux, g.conns["auth"]); err != nil {
		g.Close()
		return nil, err
	}
	if err := estimationv1.RegisterEstimationServiceHandler(ctx, mux, g.conns["estimation"]); err != nil {
		g.Close()
		return nil, err
	}
	if err := g.registerUploads(mux); err != nil {
		g.Close()
		return nil, err
	}
	if err := findingsv1.RegisterFindingsServiceHandler(ctx, mux, g.conns["findings"]); err != nil {
		g.Close()
		return nil, err
	}
	if err := scanv1.RegisterScanServiceHandler(ctx, mux, g.conns["scan"]); err != nil {
		g.Close()
		return nil, err
	}
	if err := findingsv1.RegisterWebhookServiceHandler(ctx, mux, g.conns["findings"]); err != nil {
		g.Close()
		return nil, err
	}
	if err := g.registerExport(mux); err != nil {
		g.Close()
		return nil, err
	}

	perKey := newLeases(rdb, float64(cfg.RateRPS), cfg.RateBurst)

	local := newBuckets(float64(cfg.FallbackRPS), cfg.FallbackBurst, 100000)
	failures := newBuckets(float64(cfg.AuthFailPerMinute)/60, cfg.AuthFailBurst, 100000)

	api := headAsGet(withDirectRoutes(mux, &creditsHandler{client: authv1.NewAuthServiceClient(g.conns["auth"]), marshaler: marshaler, errors: g.serviceError}))
	api = rateLimit(perKey, local, cfg.FallbackBurst, log, limited, fallback)(api)
	api = requireScope(api)
	api = authenticate(g.Verifier, failures, log, authLimited)(api)
	api = limitBodies(MaxJSONBody, bodyRate{window: cfg.BodyRateWindow, min: int64(float64(cfg.BodyMinRate) * cfg.BodyRateWindow.Seconds())}, cutBodies, api)

	root := http.NewServeMux()
	root.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	root.HandleFunc("GET /readyz", g.readyz)
	root.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openapi.JSON)
	})
	root.Handle("/", api)
	// Integrations' inbound events: no API key, a signature instead.
	inbound := g.inboundHandler(newLeases(rdb, float64(cfg.RateRPS), cfg.RateBurst), newBuckets(float64(cfg.FallbackRPS), cfg.FallbackBurst, 100000),
		newBuckets(float64(cfg.RateRPS), cfg.RateBurst, 100000), log, limited)
	root.Handle(inboundPattern, limitBodies(MaxInboundBody, bodyRate{window: cfg.BodyRateWindow, min: int64(float64(cfg.BodyMinRate) * cfg.BodyRateWindow.Seconds())}, cutBodies, inbound))

	h := accessLog(log, otel.Tracer("github.com/vulnscan/vulnscan/gateway"))(root)
	routes, err := newRouteTable(openapi.JSON, map[string][]string{uploadPath: {http.MethodPost}, exportPath: {http.MethodGet}, inboundPath: {http.MethodPost},
		"/healthz": {http.MethodGet}, "/readyz": {http.MethodGet}, "/openapi.json": {http.MethodGet}})
	if err != nil {
		g.Close()
		return nil, err
	}
	h = httpMetrics(routes, requests, latency)(h)
	g.Handler = requestID(h)
	return g, nil
}

// headAsGet routes a HEAD request as the GET of the same path, as HTTP asks
// of every server: the answer's status and headers are the GET's, and the
// server leaves its body out (net/http writes no body for a HEAD request,
// whatever the handler writes). The layers above see HEAD: it needs the
// scope read, and is counted as HEAD.
func headAsGet(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			r = r.Clone(r.Context())
			r.Method = http.MethodGet
		}
		next.ServeHTTP(w, r)
	})
}

// newRuntimeMux is grpc-gateway's generic runtime as every route uses it:
// the gateway's marshaler and error rendering, no headers passed through in
// either direction, the request id as the calls' metadata.
func newRuntimeMux(marshaler runtime.Marshaler, serviceError runtime.ErrorHandlerFunc) *runtime.ServeMux {
	return runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, marshaler),
		runtime.WithIncomingHeaderMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithOutgoingHeaderMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithOutgoingTrailerMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithMetadata(func(_ context.Context, r *http.Request) metadata.MD { return outgoingMD(r) }),
		runtime.WithErrorHandler(serviceError),
		runtime.WithRoutingErrorHandler(routingError),
		runtime.WithForwardResponseOption(successStatus),
	)
}

// Close closes the service connections.
func (g *Gateway) Close() {
	for _, cc := range g.conns {
		_ = cc.Close()
	}
}

// successStatus answers 201 for a successful POST and 204 for a DELETE.
// A POST that acts on an existing resource rather than creating one
// (cancelling a scan, a bulk triage change) answers 200; a webhook
// redelivery, queued for the delivery worker, 202.
func successStatus(ctx context.Context, w http.ResponseWriter, m proto.Message) error {
	if req, ok := ctx.Value(requestMethodKey{}).(string); ok {
		switch req {
		case http.MethodPost:
			switch m.(type) {
			case *scanv1.CancelScanResponse, *findingsv1.BulkUpdateFindingsResponse:
				return nil
			case *findingsv1.WebhookDelivery: // a redelivery is queued, not made
				w.WriteHeader(http.StatusAccepted)
				return nil
			}
			w.WriteHeader(http.StatusCreated)
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		}
	}
	return nil
}

type requestMethodKey struct{}

var protoPrefix = regexp.MustCompile(`^proto:[\s\x{00a0}]*(\(line \d+:\d+\):[\s\x{00a0}]*)?`)

// serviceError renders a service's (or the decoder's) error as the spec's body.
func (g *Gateway) serviceError(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if bodyLimitHit(r.Context()) {
		httperr.Write(w, http.StatusRequestEntityTooLarge, "Request body too large")
		return
	}
	if bodyTooSlow(r.Context()) {
		httperr.Write(w, http.StatusRequestTimeout, msgTooSlow)
		return
	}
	st := status.Convert(err)
	code := apierr.HTTPStatus(st)
	msg := st.Message()
	switch {
	case code >= 500 || st.Code() == codes.Unknown:
		if st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded {
			code = http.StatusServiceUnavailable
			msg = "Service temporarily unavailable; retry later"
		} else {
			code = http.StatusInternalServerError
			msg = apierr.Internal.Message
		}
		g.log.ErrorContext(ctx, "request failed", "grpc_code", st.Code().String(), "error", st.Message())
	case st.Code() == codes.InvalidArgument && !hasDomain(st):
		msg = decodeMessage(msg)
	case code == 499:
		return
	}
	httperr.Write(w, code, msg)
}

func hasDomain(st *status.Status) bool {
	return apierr.HTTPStatus(st) != http.StatusBadRequest || len(st.Details()) > 0
}

// decodeMessage turns grpc-gateway and protojson decoding errors into
// messages that name the field without internals.
func decodeMessage(msg string) string {
	msg = protoPrefix.ReplaceAllString(msg, "")
	switch {
	case strings.HasPrefix(msg, "unknown field"):
		return strings.Replace(msg, "unknown field", "Unknown field", 1)
	case strings.Contains(msg, "unexpected EOF"), strings.Contains(msg, "syntax error"), strings.Contains(msg, "invalid character"),
		strings.HasPrefix(msg, "unexpected token"):
		return "Malformed JSON body"
	}
	if m := fieldParse.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s has an invalid value", m[1])
	}
	return msg
}

var fieldParse = regexp.MustCompile(`parsing field "([^"]+)"`)

func routingError(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, code int) {
	switch code {
	case http.StatusMethodNotAllowed:
		httperr.Write(w, http.StatusMethodNotAllowed, fmt.Sprintf("Method %s not allowed on %s", r.Method, r.URL.Path))
	case http.StatusNotFound:
		httperr.Write(w, http.StatusNotFound, fmt.Sprintf("Cannot %s %s", r.Method, r.URL.Path))
	default:
		httperr.Write(w, code, http.StatusText(code))
	}
}

// readyz answers 200 when Redis and every service answer their health check.
func (g *Gateway) readyz(w http.ResponseWriter, r *http.Request) {
	g.readyMu.Lock()
	if time.Since(g.readyAt) > time.Second {
		g.readyErr = g.checkReady(r.Context())
		g.readyAt = time.Now()
	}
	err := g.readyErr
	g.readyMu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		httperr.Write(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
		return
	}
	_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
}

func (g *Gateway) checkReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	eg, ctx := errgroup.WithContext(ctx)
	eg.Go(func() error {
		if err := g.rdb.Ping(ctx).Err(); err != nil {
			return errors.New("redis")
		}
		return nil
	})
	for name, cc := range g.conns {
		eg.Go(func() error {
			resp, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
			if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				return errors.New(name)
			}
			return nil
		})
	}
	return eg.Wait()
}

// Serve runs the HTTP and metrics servers until ctx ends.
func (g *Gateway) Serve(ctx context.Context, cfg Config) error {
	lis, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.HTTPAddr, err)
	}
	mlis, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		_ = lis.Close()
		return fmt.Errorf("listen metrics %s: %w", cfg.MetricsAddr, err)
	}
	srv := &http.Server{Handler: g.Handler, ReadHeaderTimeout: cfg.HeaderTimeout, IdleTimeout: 120 * time.Second}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g.Registry, promhttp.HandlerOpts{}))
	server.MountPprof(mux)
	ms := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	g.log.InfoContext(ctx, "serving", "http", lis.Addr().String(), "metrics", mlis.Addr().String())

	eg, ctx := errgroup.WithContext(ctx)
	eg.Go(func() error { return ignoreClosed(srv.Serve(lis)) })
	eg.Go(func() error { return ignoreClosed(ms.Serve(mlis)) })
	eg.Go(func() error { return g.Verifier.Listen(ctx) })
	eg.Go(func() error {
		<-ctx.Done()
		g.log.InfoContext(ctx, "shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
		defer cancel()
		return errors.Join(srv.Shutdown(sctx), ms.Shutdown(sctx))
	})
	return eg.Wait()
}

func ignoreClosed(err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
