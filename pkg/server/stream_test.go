package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/logging"
)

// streamer is a server-streaming handler whose behaviour the request's
// service field picks: panic, a domain error, a raw error, or one message.
type streamer struct {
	healthpb.UnimplementedHealthServer
}

func (streamer) Watch(req *healthpb.HealthCheckRequest, ss grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	switch req.GetService() {
	case "panic":
		panic("boom")
	case "notfound":
		return apierr.NotFound("Thing not found")
	case "raw":
		return errors.New("pq: connection refused to 10.0.0.1")
	case "rid":
		// Echo the request id the stream's context carries.
		return apierr.Invalid("%s", logging.RequestID(ss.Context()))
	}
	return ss.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

// TestStreamInterceptors: a streaming RPC gets the unary chain: panic
// recovery answering the generic internal error, the request id (the
// caller's, or propagated by Dial from the client's context), one access-log
// line, metrics by method and code, and error translation that never leaks a
// driver error.
func TestStreamInterceptors(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	p, cc := healthPair(t, "Stream", &logs, streamer{})
	desc := healthpb.Health_ServiceDesc
	const method = "/vulnscan.Stream/Watch"
	watch := func(ctx context.Context, what string) (*healthpb.HealthCheckResponse, error) {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		s, err := cc.NewStream(ctx, &desc.Streams[0], method, grpc.WaitForReady(true))
		if err != nil {
			return nil, err
		}
		if err := s.SendMsg(&healthpb.HealthCheckRequest{Service: what}); err != nil {
			return nil, err
		}
		if err := s.CloseSend(); err != nil {
			return nil, err
		}
		out := new(healthpb.HealthCheckResponse)
		return out, s.RecvMsg(out)
	}
	withRID := func(id string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), RequestIDKey, id)
	}

	resp, err := watch(withRID("rid-ok"), "ok")
	require.NoError(t, err)
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, resp.GetStatus())

	_, err = watch(withRID("rid-panic"), "panic")
	require.Equal(t, codes.Internal, status.Code(err))
	require.Equal(t, apierr.Internal.Message, status.Convert(err).Message())

	_, err = watch(withRID("rid-nf"), "notfound")
	require.Equal(t, codes.NotFound, status.Code(err))
	require.Equal(t, "Thing not found", status.Convert(err).Message())

	_, err = watch(withRID("rid-raw"), "raw")
	require.Equal(t, codes.Internal, status.Code(err))
	require.NotContains(t, status.Convert(err).Message(), "10.0.0.1")

	// No metadata: Dial's stream interceptor sends the context's request id.
	_, err = watch(logging.WithRequestID(context.Background(), "rid-from-ctx"), "rid")
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	require.Equal(t, "rid-from-ctx", status.Convert(err).Message())

	access := map[string]map[string]any{}
	panicked := false
	for _, l := range logs.lines(t) {
		if l["msg"] == "rpc" && l["method"] == method {
			access[l["request_id"].(string)] = l
		}
		if l["msg"] == "panic in handler" && l["request_id"] == "rid-panic" {
			panicked = true
		}
	}
	require.True(t, panicked, "the panic is logged with its request id")
	for rid, code := range map[string]string{
		"rid-ok": "OK", "rid-panic": "Internal", "rid-nf": "NotFound", "rid-raw": "Internal", "rid-from-ctx": "InvalidArgument",
	} {
		require.Contains(t, access, rid, "access-log line for %s", rid)
		require.Equal(t, code, access[rid]["code"], rid)
	}

	require.InDelta(t, 2, handled(t, p, method, "Internal"), 0)
	require.InDelta(t, 1, handled(t, p, method, "OK"), 0)
	require.InDelta(t, 1, handled(t, p, method, "NotFound"), 0)
}

// handled is grpc_server_handled_total for method and code.
func handled(t *testing.T, p *Process, method, code string) float64 {
	t.Helper()
	mfs, err := p.Registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "grpc_server_handled_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["method"] == method && labels["code"] == code {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
