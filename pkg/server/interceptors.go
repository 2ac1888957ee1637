package server

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/mtls"
)

// RequestIDKey is the metadata key carrying the request id between processes.
const RequestIDKey = "x-request-id"

// RPCMetrics counts and times RPCs per method and code.
type RPCMetrics struct {
	handled *prometheus.CounterVec
	latency *prometheus.HistogramVec
}

// NewRPCMetrics registers the RPC metrics in reg.
func NewRPCMetrics(reg prometheus.Registerer) *RPCMetrics {
	m := &RPCMetrics{
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_handled_total", Help: "RPCs completed, by method and status code.",
		}, []string{"method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "grpc_server_handling_seconds", Help: "RPC latency, by method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method"}),
	}
	reg.MustRegister(m.handled, m.latency)
	return m
}

func recoveryInterceptor(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if r := recover(); r != nil {
				log.ErrorContext(ctx, "panic in handler", "method", info.FullMethod, "panic", r, "stack", string(debug.Stack()))
				err = status.Error(codes.Internal, apierr.Internal.Message)
			}
		}()
		return h(ctx, req)
	}
}

func requestIDInterceptor(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	return h(logging.WithRequestID(ctx, incomingRequestID(ctx)), req)
}

// incomingRequestID is the caller's request id, or a new one.
func incomingRequestID(ctx context.Context) string {
	// ValueFromIncomingContext copies this key's values only, not the
	// whole metadata.
	if v := metadata.ValueFromIncomingContext(ctx, RequestIDKey); len(v) > 0 && v[0] != "" && len(v[0]) <= 128 {
		return v[0]
	}
	return uuid.NewString()
}

func loggingInterceptor(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := h(ctx, req)
		if info.FullMethod == "/grpc.health.v1.Health/Check" {
			return resp, err
		}
		logRPC(ctx, log, info.FullMethod, start, err)
		return resp, err
	}
}

// logRPC writes one access-log line for a finished call, unary or stream.
func logRPC(ctx context.Context, log *slog.Logger, method string, start time.Time, err error) {
	code := status.Code(translate(ctx, nil, err))
	level := rpcLogLevel(ctx, code)
	if !log.Enabled(ctx, level) {
		return
	}
	attrs := []any{"method", method, "code", code.String(), "duration_ms", float64(time.Since(start).Microseconds()) / 1000}
	if err != nil && level == slog.LevelError {
		attrs = append(attrs, "error", err.Error())
	}
	log.Log(ctx, level, "rpc", attrs...)
}

// rpcLogLevel is the level of a call's "rpc" line. A call the gateway makes
// for a public request is already in the gateway's access line, with the
// same request id and trace id, so it gets its own line only at debug level
// unless it failed on the server side: one line per request, not one per
// process on its path. Calls between services and from operators keep their
// line at info; server-side failures are errors wherever they come from.
func rpcLogLevel(ctx context.Context, code codes.Code) slog.Level {
	if code == codes.Internal || code == codes.Unknown {
		return slog.LevelError
	}
	if caller, _ := mtls.Caller(ctx); caller == mtls.Gateway {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

func metricsInterceptor(m *RPCMetrics) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := h(ctx, req)
		m.observe(ctx, info.FullMethod, start, err)
		return resp, err
	}
}

// observe records one finished call, unary or stream.
func (m *RPCMetrics) observe(ctx context.Context, method string, start time.Time, err error) {
	m.latency.WithLabelValues(method).Observe(time.Since(start).Seconds())
	m.handled.WithLabelValues(method, status.Code(translate(ctx, nil, err)).String()).Inc()
}

// errorInterceptor is the service's one error translator: domain errors
// become their gRPC status; anything unexpected is logged and becomes a
// generic Internal error, so driver errors never reach a caller.
func errorInterceptor(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if err != nil {
			err = translate(ctx, log.With("method", info.FullMethod), err)
		}
		return resp, err
	}
}

func translate(ctx context.Context, log *slog.Logger, err error) error {
	if err == nil {
		return nil
	}
	var ae *apierr.Error
	switch {
	case errors.As(err, &ae):
		if ae.Status >= 500 && log != nil {
			log.ErrorContext(ctx, "request failed", "error", err.Error())
		}
		return ae.GRPCStatus().Err()
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "request canceled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "deadline exceeded")
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown && st.Code() != codes.Internal {
		return err
	}
	if db.Unavailable(err) {
		// The database is down or restarting: a clear, retryable 503 at
		// the edge rather than a 500. The pool reconnects by itself.
		if log != nil {
			log.WarnContext(ctx, "database unavailable", "error", err.Error())
		}
		return status.Error(codes.Unavailable, "Service temporarily unavailable; retry later")
	}
	if log != nil {
		log.ErrorContext(ctx, "unexpected error", "error", err.Error())
	}
	return status.Error(codes.Internal, apierr.Internal.Message)
}

// propagateRequestID copies the request id of the incoming call to outgoing calls.
func propagateRequestID(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(outgoingRequestID(ctx), method, req, reply, cc, opts...)
}

// outgoingRequestID adds ctx's request id to its outgoing metadata.
func outgoingRequestID(ctx context.Context) context.Context {
	if id := logging.RequestID(ctx); id != "" {
		if len(metadata.ValueFromOutgoingContext(ctx, RequestIDKey)) == 0 {
			ctx = metadata.AppendToOutgoingContext(ctx, RequestIDKey, id)
		}
	}
	return ctx
}
