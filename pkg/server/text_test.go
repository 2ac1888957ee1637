package server

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// countingHealth counts the calls that reach its handlers.
type countingHealth struct {
	healthpb.UnimplementedHealthServer
	calls atomic.Int64
}

func (h *countingHealth) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	h.calls.Add(1)
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (h *countingHealth) Watch(_ *healthpb.HealthCheckRequest, ss grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	h.calls.Add(1)
	return ss.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
}

// TestTextChecks: a request carrying text that is not UTF-8 or holds NUL is
// refused as a 400 (InvalidArgument) naming the field, before any handler:
// by the caller's connection from Dial (protobuf could not marshal the
// former), and by the service itself for a caller without those checks,
// unary and streaming alike.
func TestTextChecks(t *testing.T) {
	t.Parallel()
	impl := &countingHealth{}
	_, addr, caller := healthServer(t, "Text", io.Discard, impl)
	desc := healthpb.Health_ServiceDesc
	checked, err := Dial(addr, caller, "auth")
	require.NoError(t, err)
	t.Cleanup(func() { _ = checked.Close() })
	// A caller without the checks: only the service's remain.
	raw, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(caller.ClientConfig("auth"))))
	require.NoError(t, err)
	t.Cleanup(func() { _ = raw.Close() })

	unary := func(cc *grpc.ClientConn, service string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return cc.Invoke(ctx, "/vulnscan.Text/Check", &healthpb.HealthCheckRequest{Service: service}, new(healthpb.HealthCheckResponse), grpc.WaitForReady(true))
	}
	stream := func(cc *grpc.ClientConn, service string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		s, err := cc.NewStream(ctx, &desc.Streams[0], "/vulnscan.Text/Watch", grpc.WaitForReady(true))
		if err != nil {
			return err
		}
		if err := s.SendMsg(&healthpb.HealthCheckRequest{Service: service}); err != nil {
			return err
		}
		if err := s.CloseSend(); err != nil {
			return err
		}
		return s.RecvMsg(new(healthpb.HealthCheckResponse))
	}
	const nul = "service must not contain the NUL character (U+0000)"
	const notUTF8 = "service must be valid UTF-8"
	for _, tc := range []struct {
		name    string
		call    func(*grpc.ClientConn, string) error
		cc      *grpc.ClientConn
		service string
		want    string // "" for success
	}{
		{"unary, valid text", unary, checked, "répertoire\n\t✓", ""},
		{"unary, NUL, refused by the caller", unary, checked, "a\x00b", nul},
		{"unary, not UTF-8, refused by the caller", unary, checked, "caf\xe9", notUTF8},
		{"unary, NUL, refused by the service", unary, raw, "a\x00b", nul},
		{"stream, valid text", stream, checked, "ok", ""},
		{"stream, NUL, refused by the caller", stream, checked, "\x00", nul},
		{"stream, not UTF-8, refused by the caller", stream, checked, "\xff", notUTF8},
		{"stream, NUL, refused by the service", stream, raw, "\x00", nul},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := impl.calls.Load()
			err := tc.call(tc.cc, tc.service)
			if tc.want == "" {
				require.NoError(t, err)
				require.Equal(t, before+1, impl.calls.Load())
				return
			}
			require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
			require.Equal(t, tc.want, status.Convert(err).Message())
			require.Equal(t, before, impl.calls.Load(), "no handler ran")
		})
	}

	// Without the caller's check, text that is not UTF-8 cannot even be
	// sent: the failure the check turns into a 400.
	err = unary(raw, "caf\xe9")
	require.Equal(t, codes.Internal, status.Code(err), "%v", err)
	require.Contains(t, status.Convert(err).Message(), "invalid UTF-8")
}
