package server

import (
	"context"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/vulnscan/vulnscan/pkg/telemetry"
)

// serverTracing returns the server options that trace calls: otelgrpc's
// stats handler, which records a span per call (health checks aside), when
// spans are exported; otherwise interceptors, outermost in the chain, that
// only continue the caller's trace.
func serverTracing() []grpc.ServerOption {
	if telemetry.Exporting() {
		return []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(otelgrpc.WithFilter(notHealth)))}
	}
	t := propagatingServer{tracer: otel.Tracer(tracerName)}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(t.unary), grpc.ChainStreamInterceptor(t.stream)}
}

// clientTracing returns the client options that trace calls, the
// counterpart of serverTracing.
func clientTracing() []grpc.DialOption {
	if telemetry.Exporting() {
		return []grpc.DialOption{grpc.WithStatsHandler(otelgrpc.NewClientHandler())}
	}
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(propagateTrace), grpc.WithChainStreamInterceptor(propagateTraceStream)}
}

const tracerName = "github.com/vulnscan/vulnscan/pkg/server"

// Without an exporter no span is recorded (see package telemetry), yet
// every call still continues its caller's trace, so that each process's
// logs carry the trace id the gateway gave the request. otelgrpc does that
// too, at a cost that matters on a short call (about 7 % of the auth
// service's CPU answering the credits read): a client span, message
// events, and, because a stats handler is installed, grpc itself copies
// every call's incoming metadata for it. The propagating interceptors keep
// what the logs need: the client sends its current trace context and
// baggage, with the installed propagator; the server extracts them,
// without copying the metadata, and runs the call under a span of its own
// in the caller's trace.

// propagateTrace sends a unary call's trace context and baggage.
func propagateTrace(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(outgoingTrace(ctx), method, req, reply, cc, opts...)
}

// propagateTraceStream sends a stream's trace context and baggage.
func propagateTraceStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(outgoingTrace(ctx), desc, cc, method, opts...)
}

// outgoingTrace adds ctx's trace context and baggage, as the installed
// propagator writes them, to its outgoing metadata.
func outgoingTrace(ctx context.Context) context.Context {
	var out outgoingCarrier
	otel.GetTextMapPropagator().Inject(ctx, &out)
	if len(out) == 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, out...)
}

// propagatingServer continues callers' traces.
type propagatingServer struct{ tracer trace.Tracer }

// start returns ctx in the trace its incoming metadata carries, under a
// new span for method, which the caller ends.
func (s propagatingServer) start(ctx context.Context, method string) (context.Context, trace.Span) {
	ctx = otel.GetTextMapPropagator().Extract(ctx, incomingCarrier{ctx})
	return s.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer))
}

func (s propagatingServer) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, span := s.start(ctx, info.FullMethod)
	defer span.End()
	return h(ctx, req)
}

func (s propagatingServer) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, span := s.start(ss.Context(), info.FullMethod)
	defer span.End()
	return h(srv, withContext(ss, ctx))
}

// outgoingCarrier collects the headers a propagator injects, as key, value
// pairs for metadata.AppendToOutgoingContext.
type outgoingCarrier []string

func (c *outgoingCarrier) Get(string) string { return "" }
func (c *outgoingCarrier) Set(key, value string) {
	*c = append(*c, key, value)
}
func (c *outgoingCarrier) Keys() []string {
	keys := make([]string, 0, len(*c)/2)
	for i := 0; i < len(*c); i += 2 {
		keys = append(keys, (*c)[i])
	}
	return keys
}

// incomingCarrier reads the headers a propagator extracts from a call's
// incoming metadata, one key at a time.
type incomingCarrier struct{ ctx context.Context }

func (c incomingCarrier) Get(key string) string {
	if v := metadata.ValueFromIncomingContext(c.ctx, key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func (c incomingCarrier) Set(string, string) {}

func (c incomingCarrier) Keys() []string {
	md, _ := metadata.FromIncomingContext(c.ctx)
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	return keys
}
