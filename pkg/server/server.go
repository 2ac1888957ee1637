package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/stats"
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

	grpcAddr    string
	metricsAddr string
	workers     []func(context.Context) error
	closers     []func()
	checks      []func(context.Context) error
}

// CheckInterval is how often health checks run.
var CheckInterval = 2 * time.Second

// Check adds a dependency check (e.g. pinging the database): while any
// check fails, the gRPC health service answers NOT_SERVING, so that the
// gateway's /readyz and Kubernetes readiness see the outage.
func (p *Process) Check(fn func(context.Context) error) { p.checks = append(p.checks, fn) }

// healthy runs every check once.
func (p *Process) healthy(ctx context.Context) error {
	for _, c := range p.checks {
		cctx, cancel := context.WithTimeout(ctx, CheckInterval)
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
	t := time.NewTicker(CheckInterval)
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
			p.Log.Warn("dependency check failed; reporting NOT_SERVING", "error", err.Error())
			p.Health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
			serving = false
		case err == nil && !serving:
			p.Log.Info("dependencies answer again; reporting SERVING")
			p.Health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
			serving = true
		}
	}
}

// New builds a process named name serving gRPC on grpcAddr and metrics on
// metricsAddr, with the standard interceptor chain.
func New(name string, log *slog.Logger, grpcAddr, metricsAddr string) *Process {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := NewRPCMetrics(reg)
	gs := grpc.NewServer(
		grpc.StatsHandler(otelgrpc.NewServerHandler(otelgrpc.WithFilter(notHealth))),
		grpc.MaxRecvMsgSize(MaxMessageSize),
		grpc.MaxSendMsgSize(MaxMessageSize),
		grpc.ChainUnaryInterceptor(
			recoveryInterceptor(log),
			requestIDInterceptor,
			loggingInterceptor(log),
			metricsInterceptor(m),
			errorInterceptor(log),
		),
	)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	return &Process{Name: name, Log: log, GRPC: gs, Health: hs, Registry: reg, grpcAddr: grpcAddr, metricsAddr: metricsAddr}
}

func notHealth(info *stats.RPCTagInfo) bool {
	return info.FullMethodName != "/grpc.health.v1.Health/Check" && info.FullMethodName != "/grpc.health.v1.Health/Watch"
}

// Worker adds a background loop that runs until the process stops. It must
// return when its context ends.
func (p *Process) Worker(fn func(context.Context) error) { p.workers = append(p.workers, fn) }

// OnClose adds a function run after the servers have stopped, in reverse order.
func (p *Process) OnClose(fn func()) { p.closers = append(p.closers, fn) }

// Run serves until ctx ends, then shuts down gracefully within grace.
func (p *Process) Run(ctx context.Context, grace time.Duration) error {
	defer func() {
		for i := len(p.closers) - 1; i >= 0; i-- {
			p.closers[i]()
		}
	}()
	lis, err := net.Listen("tcp", p.grpcAddr)
	if err != nil {
		return fmt.Errorf("listen grpc %s: %w", p.grpcAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(p.Registry, promhttp.HandlerOpts{}))
	ms := &http.Server{Addr: p.metricsAddr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	mlis, err := net.Listen("tcp", p.metricsAddr)
	if err != nil {
		_ = lis.Close()
		return fmt.Errorf("listen metrics %s: %w", p.metricsAddr, err)
	}

	g, gctx := errgroup.WithContext(ctx)
	status := healthpb.HealthCheckResponse_SERVING
	if err := p.healthy(ctx); err != nil {
		status = healthpb.HealthCheckResponse_NOT_SERVING
	}
	p.Health.SetServingStatus("", status)
	go p.watchHealth(gctx)
	p.Log.Info("serving", "grpc", lis.Addr().String(), "metrics", mlis.Addr().String())
	g.Go(func() error { return p.GRPC.Serve(lis) })
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
		p.Log.Info("shutting down")
		p.Health.Shutdown()
		done := make(chan struct{})
		go func() { p.GRPC.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-time.After(grace):
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

// Dial opens a client connection to another vulnscan service with tracing,
// request id propagation and the shared message size limits.
func Dial(addr string) (*grpc.ClientConn, error) {
	cc, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler()),
		grpc.WithChainUnaryInterceptor(propagateRequestID),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize)),
	)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return cc, nil
}
