package server

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vulnscan/vulnscan/pkg/logging"
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
	ids := identities(t, "auth", "scan")
	addr := freeAddr(t)
	p := New("auth", logging.New(&syncBuffer{}, "auth"), addr, freeAddr(t), Security{
		Identity: ids[0], Policy: Policy{"/vulnscan.Workers/": {"scan"}},
	})
	desc := healthpb.Health_ServiceDesc
	desc.ServiceName = "vulnscan.Workers"
	const calls = 200
	rec := goroutineRecorder{seen: make(chan []byte, calls)}
	p.GRPC.RegisterService(&desc, rec)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })

	cc, err := Dial(addr, ids[1], "auth")
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
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
