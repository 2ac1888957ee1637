package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/mtls"
)

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// healthPair starts a process from New (named auth, logging to w) that
// serves impl as the health service under the name vulnscan.<name>,
// callable by the scan identity, and returns it with a connection to it
// from Dial.
func healthPair(t *testing.T, name string, w io.Writer, impl healthpb.HealthServer) (*Process, *grpc.ClientConn) {
	p, addr, caller := healthServer(t, name, w, impl)
	cc, err := Dial(addr, caller, "auth")
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	return p, cc
}

// healthServer is healthPair without the connection: the process, its
// address and the identity allowed to call it.
func healthServer(t *testing.T, name string, w io.Writer, impl healthpb.HealthServer) (*Process, string, *mtls.Identity) {
	ids := identities(t, "auth", "scan")
	addr := freeAddr(t)
	p := New("auth", logging.New(w, "auth"), addr, freeAddr(t), Security{
		Identity: ids[0], Policy: Policy{"/vulnscan." + name + "/": {"scan"}},
	})
	desc := healthpb.Health_ServiceDesc
	desc.ServiceName = "vulnscan." + name
	p.GRPC.RegisterService(&desc, impl)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })
	return p, addr, ids[1]
}

func TestHealthFollowsChecks(t *testing.T) {
	addr := freeAddr(t)
	ids := identities(t, "auth", "gateway")
	srvID, cliID := ids[0], ids[1]
	p := New("test", slog.New(slog.NewTextHandler(io.Discard, nil)), addr, freeAddr(t), Security{Identity: srvID})
	p.CheckInterval = 50 * time.Millisecond
	var down atomic.Bool
	p.Check(func(context.Context) error {
		if down.Load() {
			return errors.New("database unreachable")
		}
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, time.Second) }()

	cc, err := Dial(addr, cliID, "auth")
	require.NoError(t, err)
	defer cc.Close()
	hc := healthpb.NewHealthClient(cc)
	status := func() healthpb.HealthCheckResponse_ServingStatus {
		r, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{})
		if err != nil {
			return healthpb.HealthCheckResponse_UNKNOWN
		}
		return r.GetStatus()
	}
	require.Eventually(t, func() bool { return status() == healthpb.HealthCheckResponse_SERVING }, 5*time.Second, 20*time.Millisecond)
	down.Store(true)
	require.Eventually(t, func() bool { return status() == healthpb.HealthCheckResponse_NOT_SERVING }, 5*time.Second, 20*time.Millisecond)
	down.Store(false)
	require.Eventually(t, func() bool { return status() == healthpb.HealthCheckResponse_SERVING }, 5*time.Second, 20*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
}

// identities issues certificates for names from a fresh local CA.
func identities(t *testing.T, names ...string) []*mtls.Identity {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, mtls.Generate(dir, names...))
	out := make([]*mtls.Identity, len(names))
	for i, n := range names {
		id, err := mtls.Load(mtls.Files{CA: filepath.Join(dir, "ca.crt"), Cert: filepath.Join(dir, n+".crt"), Key: filepath.Join(dir, n+".key")}, n)
		require.NoError(t, err)
		out[i] = id
	}
	return out
}

// TestDialFollowsTopology: a process may dial only the peers pkg/topology
// lists for its identity.
func TestDialFollowsTopology(t *testing.T) {
	t.Parallel()
	ids := identities(t, "estimation", "findings", "operator")
	for _, tc := range []struct {
		id     *mtls.Identity
		server string
		ok     bool
	}{
		{ids[0], "auth", true},
		{ids[1], "auth", true},
		{ids[2], "findings", true},
		{ids[0], "scan", false},
		{ids[1], "scan", false},
		{ids[2], "scan", false},
	} {
		cc, err := Dial("127.0.0.1:1", tc.id, tc.server)
		if tc.ok {
			require.NoError(t, err, "%s -> %s", tc.id.Name, tc.server)
			require.NoError(t, cc.Close())
			continue
		}
		require.ErrorContains(t, err, "not an edge of pkg/topology", "%s -> %s", tc.id.Name, tc.server)
	}
}
