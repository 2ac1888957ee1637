package server

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// goroutineRecorder answers Check and records the goroutine that ran it.
type goroutineRecorder struct {
	healthpb.UnimplementedHealthServer
	seen chan []byte
}

func (g goroutineRecorder) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := bytes.Cut(buf, []byte(" ["))
	g.seen <- id // "goroutine N"
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// TestCallsRunOnStreamWorkers: one call after another runs on a few
// long-lived goroutines, whose stacks have grown once, not on a new
// goroutine per call.
func TestCallsRunOnStreamWorkers(t *testing.T) {
	t.Parallel()
	const calls = 200
	rec := goroutineRecorder{seen: make(chan []byte, calls)}
	_, cc := healthPair(t, "Workers", &syncBuffer{}, rec)
	ctx := context.Background()
	for range calls {
		out := new(healthpb.HealthCheckResponse)
		require.NoError(t, cc.Invoke(ctx, "/vulnscan.Workers/Check", &healthpb.HealthCheckRequest{}, out, grpc.WaitForReady(true)))
	}
	goroutines := map[string]bool{}
	for range calls {
		goroutines[string(<-rec.seen)] = true
	}
	require.LessOrEqual(t, len(goroutines), int(StreamWorkers()), "calls reuse the stream workers")
	require.Less(t, len(goroutines), calls)
}
