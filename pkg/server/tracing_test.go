package server

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/vulnscan/vulnscan/pkg/telemetry"
)

// traceRecorder answers Check and Watch and records the context each
// handler sees.
type traceRecorder struct {
	healthpb.UnimplementedHealthServer
	seen chan context.Context
}

func (r traceRecorder) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	select {
	case r.seen <- ctx:
	default:
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (r traceRecorder) Watch(_ *healthpb.HealthCheckRequest, ss healthpb.Health_WatchServer) error {
	r.seen <- ss.Context()
	return ss.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
}

// withoutExporter installs telemetry as a process without an OTLP
// endpoint does.
func withoutExporter(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	shutdown, err := telemetry.Setup(context.Background(), "test", "v0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = shutdown(context.Background()) })
}

// callerContext is a caller's context: a span of its trace and a baggage
// member.
func callerContext(t *testing.T) (context.Context, trace.SpanContext) {
	ctx, span := otel.Tracer("caller").Start(context.Background(), "request")
	t.Cleanup(func() { span.End() })
	m, err := baggage.NewMember("tenant", "acme")
	require.NoError(t, err)
	b, err := baggage.New(m)
	require.NoError(t, err)
	return baggage.ContextWithBaggage(ctx, b), span.SpanContext()
}

// tracedPair starts a server from New serving rec as vulnscan.Traced and
// returns a client connection to it from Dial.
func tracedPair(t *testing.T, rec traceRecorder) *grpc.ClientConn {
	_, cc := healthPair(t, "Traced", &syncBuffer{}, rec)
	return cc
}

// TestCallsContinueTheCallersTrace: without an exporter, a call through
// Dial to a server from New, unary or streaming, runs in the caller's
// trace, under a span of its own, with the caller's baggage.
func TestCallsContinueTheCallersTrace(t *testing.T) {
	withoutExporter(t)
	rec := traceRecorder{seen: make(chan context.Context, 1)}
	cc := tracedPair(t, rec)
	callCtx, caller := callerContext(t)
	require.True(t, caller.IsValid())
	check := func(got context.Context) {
		t.Helper()
		sc := trace.SpanContextFromContext(got)
		require.True(t, sc.IsValid())
		require.Equal(t, caller.TraceID(), sc.TraceID(), "the call continues the caller's trace")
		require.NotEqual(t, caller.SpanID(), sc.SpanID(), "under a span of its own")
		require.Equal(t, "acme", baggage.FromContext(got).Member("tenant").Value())
	}

	out := new(healthpb.HealthCheckResponse)
	require.NoError(t, cc.Invoke(callCtx, "/vulnscan.Traced/Check", &healthpb.HealthCheckRequest{}, out, grpc.WaitForReady(true)))
	check(<-rec.seen)

	desc := &grpc.StreamDesc{StreamName: "Watch", ServerStreams: true}
	st, err := cc.NewStream(callCtx, desc, "/vulnscan.Traced/Watch", grpc.WaitForReady(true))
	require.NoError(t, err)
	require.NoError(t, st.SendMsg(&healthpb.HealthCheckRequest{}))
	require.NoError(t, st.CloseSend())
	require.NoError(t, st.RecvMsg(out))
	check(<-rec.seen)

	// A call outside any trace sends no trace headers: the server starts
	// a trace of its own.
	require.NoError(t, cc.Invoke(context.Background(), "/vulnscan.Traced/Check", &healthpb.HealthCheckRequest{}, out))
	sc := trace.SpanContextFromContext(<-rec.seen)
	require.True(t, sc.IsValid())
	require.NotEqual(t, caller.TraceID(), sc.TraceID())
	_, sent := metadata.FromOutgoingContext(outgoingTrace(context.Background()))
	require.False(t, sent, "no trace, no headers")
}

// TestPropagatingCallsCostLessThanOtelgrpc: a call whose trace is only
// propagated allocates less, client and server together, than the same
// call traced by otelgrpc's stats handlers, which processes use when they
// export spans.
func TestPropagatingCallsCostLessThanOtelgrpc(t *testing.T) {
	withoutExporter(t)
	lean := tracedPair(t, traceRecorder{seen: make(chan context.Context)})
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1") // read by New and Dial; nothing is exported
	full := tracedPair(t, traceRecorder{seen: make(chan context.Context)})
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")

	ctx, _ := callerContext(t)
	out := new(healthpb.HealthCheckResponse)
	call := func(cc *grpc.ClientConn) func() {
		return func() {
			if err := cc.Invoke(ctx, "/vulnscan.Traced/Check", &healthpb.HealthCheckRequest{}, out, grpc.WaitForReady(true)); err != nil {
				t.Fatal(err)
			}
		}
	}
	call(lean)()
	call(full)()
	leanAllocs := testing.AllocsPerRun(300, call(lean))
	fullAllocs := testing.AllocsPerRun(300, call(full))
	t.Logf("allocations per call, both ends: propagating %.0f, otelgrpc %.0f", leanAllocs, fullAllocs)
	require.Less(t, leanAllocs, fullAllocs-10)
}
