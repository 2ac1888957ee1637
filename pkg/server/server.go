package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/stats"

	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/topology"
)

// MaxMessageSize bounds gRPC messages between vulnscan processes.
const MaxMessageSize = 64 << 20

// Process is one running service: its gRPC server and everything around it.
type Process struct {
	Name     string
	Log      *slog.Logger
	GRPC     *grpc.Server
	Health   *health.Server
	Registry *prometheus.Registry
	// Admin is the operator-only server on its own listener, nil when the
	// service has no admin API.
	Admin *grpc.Server
	// CheckInterval is how often the health checks run, and how long one
	// may take (DefaultCheckInterval unless set before Serve).
	CheckInterval time.Duration

	grpcAddr    string
	adminAddr   string
	serving     atomic.Bool
	metricsAddr string
	workers     []func(context.Context) error
	checks      []func(context.Context) error
}

// DefaultCheckInterval is how often health checks run unless a process
// sets its own.
const DefaultCheckInterval = 2 * time.Second

// Check adds a dependency check (e.g. pinging the database): while any
// check fails, the gRPC health service answers NOT_SERVING, so that the
// gateway's /readyz and Kubernetes readiness see the outage.
func (p *Process) Check(fn func(context.Context) error) { p.checks = append(p.checks, fn) }

func (p *Process) checkInterval() time.Duration {
	if p.CheckInterval > 0 {
		return p.CheckInterval
	}
	return DefaultCheckInterval
}

// healthy runs every check once.
func (p *Process) healthy(ctx context.Context) error {
	for _, c := range p.checks {
		cctx, cancel := context.WithTimeout(ctx, p.checkInterval())
		err := c(cctx)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// watchHealth keeps the serving status in step with the checks.
func (p *Process) watchHealth(ctx context.Context) {
	serving := true
	t := time.NewTicker(p.checkInterval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := p.healthy(ctx)
		switch {
		case err != nil && serving:
			p.Log.WarnContext(ctx, "dependency check failed; reporting NOT_SERVING", "error", err.Error())
			p.Health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
			p.serving.Store(false)
			serving = false
		case err == nil && !serving:
			p.Log.InfoContext(ctx, "dependencies answer again; reporting SERVING")
			p.Health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
			p.serving.Store(true)
			serving = true
		}
	}
}

// Security is how a process's gRPC listeners authenticate and authorize.
type Security struct {
	// Identity is the process's certificate; servers require TLS 1.3 and a
	// client certificate from the same CA.
	Identity *mtls.Identity
	// Verifier checks the gateway-signed tenant identities of public calls.
	Verifier *principal.Verifier
	// Policy is the allow-list of the main listener.
	Policy Policy
	// AdminAddr and AdminPolicy set up the admin listener; an empty address
	// means the service has none.
	AdminAddr   string
	AdminPolicy Policy
}

// StreamWorkers is how many goroutines each gRPC server keeps to run calls:
// sixteen per CPU the process may use. A call runs on an idle worker, whose
// stack has already grown to the depth of the interceptor chain, handler
// and database driver; without workers every call starts a goroutine with
// a fresh small stack, which grows, by copying, several times per call (on
// the credits path, about 5 % of the auth service's CPU). When every worker
// is busy a call gets a goroutine of its own, as without workers, so the
// number bounds nothing.
func StreamWorkers() uint32 { return uint32(16 * runtime.GOMAXPROCS(0)) }

// New builds a process named name serving gRPC on grpcAddr (and its admin API
// on sec.AdminAddr) and metrics on metricsAddr, with the standard interceptor
// chain behind the authorization guard.
func New(name string, log *slog.Logger, grpcAddr, metricsAddr string, sec Security) *Process {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := NewRPCMetrics(reg)
	newServer := func(policy Policy) *grpc.Server {
		g := guard{policy: policy, verifier: sec.Verifier}
		return grpc.NewServer(append(serverTracing(),
			grpc.Creds(credentials.NewTLS(sec.Identity.ServerConfig())),
			grpc.MaxRecvMsgSize(MaxMessageSize),
			grpc.MaxSendMsgSize(MaxMessageSize),
			grpc.NumStreamWorkers(StreamWorkers()),
			grpc.ChainUnaryInterceptor(
				recoveryInterceptor(log),
				requestIDInterceptor,
				loggingInterceptor(log),
				metricsInterceptor(m),
				errorInterceptor(log),
				g.unary,
				textInterceptor,
				// Again around the handler, so that a handler's panic is
				// logged with its request id and counted as Internal.
				recoveryInterceptor(log),
			),
			grpc.ChainStreamInterceptor(
				streamRecoveryInterceptor(log),
				streamRequestIDInterceptor,
				streamLoggingInterceptor(log),
				streamMetricsInterceptor(m),
				streamErrorInterceptor(log),
				g.stream,
				textStreamInterceptor,
				streamRecoveryInterceptor(log),
			),
		)...)
	}
	gs := newServer(sec.Policy)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	p := &Process{Name: name, Log: log, GRPC: gs, Health: hs, Registry: reg, grpcAddr: grpcAddr, metricsAddr: metricsAddr}
	if sec.AdminAddr != "" {
		p.Admin = newServer(sec.AdminPolicy)
		p.adminAddr = sec.AdminAddr
	}
	return p
}

func notHealth(info *stats.RPCTagInfo) bool {
	return info.FullMethodName != "/grpc.health.v1.Health/Check" && info.FullMethodName != "/grpc.health.v1.Health/Watch"
}

// Worker adds a background loop that runs until the process stops. It must
// return when its context ends.
func (p *Process) Worker(fn func(context.Context) error) { p.workers = append(p.workers, fn) }

// Run serves until ctx ends, then shuts down gracefully within grace.
func (p *Process) Run(ctx context.Context, grace time.Duration) error {
	lis, err := net.Listen("tcp", p.grpcAddr)
	if err != nil {
		return fmt.Errorf("listen grpc %s: %w", p.grpcAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(p.Registry, promhttp.HandlerOpts{}))
	MountPprof(mux)
	// Probes: the gRPC ports require a client certificate, so Kubernetes
	// probes ask here (plain HTTP, nothing secret) instead.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !p.serving.Load() {
			http.Error(w, "not serving", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	ms := &http.Server{Addr: p.metricsAddr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	mlis, err := net.Listen("tcp", p.metricsAddr)
	if err != nil {
		_ = lis.Close()
		return fmt.Errorf("listen metrics %s: %w", p.metricsAddr, err)
	}
	var alis net.Listener
	if p.Admin != nil {
		if alis, err = net.Listen("tcp", p.adminAddr); err != nil {
			_ = lis.Close()
			_ = mlis.Close()
			return fmt.Errorf("listen admin grpc %s: %w", p.adminAddr, err)
		}
	}

	g, gctx := errgroup.WithContext(ctx)
	status := healthpb.HealthCheckResponse_SERVING
	if err := p.healthy(ctx); err != nil {
		status = healthpb.HealthCheckResponse_NOT_SERVING
	}
	p.Health.SetServingStatus("", status)
	p.serving.Store(status == healthpb.HealthCheckResponse_SERVING)
	go p.watchHealth(gctx)
	p.Log.InfoContext(ctx, "serving", "grpc", lis.Addr().String(), "admin_grpc", p.adminAddr, "metrics", mlis.Addr().String())
	g.Go(func() error { return p.GRPC.Serve(lis) })
	if p.Admin != nil {
		g.Go(func() error { return p.Admin.Serve(alis) })
	}
	g.Go(func() error {
		if err := ms.Serve(mlis); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	// Workers see the context end when shutdown begins and must hand back or
	// finish their in-flight work before they return.
	for _, w := range p.workers {
		g.Go(func() error {
			if err := w(gctx); err != nil && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("worker: %w", err)
			}
			return nil
		})
	}
	g.Go(func() error {
		<-gctx.Done()
		p.Log.InfoContext(ctx, "shutting down")
		p.Health.Shutdown()
		p.serving.Store(false)
		done := make(chan struct{})
		go func() {
			if p.Admin != nil {
				p.Admin.GracefulStop()
			}
			p.GRPC.GracefulStop()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(grace):
			if p.Admin != nil {
				p.Admin.Stop()
			}
			p.GRPC.Stop()
		}
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return ms.Shutdown(sctx)
	})
	err = g.Wait()
	if errors.Is(err, grpc.ErrServerStopped) {
		err = nil
	}
	return err
}

// Dial opens a client connection to the vulnscan service called server at
// addr, presenting id's certificate and accepting only a server certificate
// naming server, with tracing, request id propagation, the requests' text
// checks (CheckText) and the shared message size limits. It refuses a peer
// that pkg/topology does not list for id, so a process configured to call a
// service outside the one table of edges fails at start instead of in a
// cluster whose network policies follow the table.
func Dial(addr string, id *mtls.Identity, server string, extra ...grpc.DialOption) (*grpc.ClientConn, error) {
	if id == nil {
		return nil, fmt.Errorf("dial %s: no client identity", server)
	}
	if !topology.Allows(id.Name, server) {
		return nil, fmt.Errorf("dial %s: %s -> %s is not an edge of pkg/topology", server, id.Name, server)
	}
	return DialUnlisted(addr, id, server, extra...)
}

// DialUnlisted is Dial without the topology check. It exists for tests that
// play an identity calling where it must not, to prove the server refuses
// it; processes use Dial.
func DialUnlisted(addr string, id *mtls.Identity, server string, extra ...grpc.DialOption) (*grpc.ClientConn, error) {
	if id == nil {
		return nil, fmt.Errorf("dial %s: no client identity", server)
	}
	cc, err := grpc.NewClient(addr, append(append(clientTracing(),
		grpc.WithTransportCredentials(credentials.NewTLS(id.ClientConfig(server))),
		grpc.WithChainUnaryInterceptor(CheckText, propagateRequestID),
		grpc.WithChainStreamInterceptor(CheckTextStream, propagateRequestIDStream),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize)),
	), extra...)...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return cc, nil
}
