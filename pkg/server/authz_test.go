package server

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/principal"
)

func TestPolicyAllows(t *testing.T) {
	t.Parallel()
	p := Policy{"/a.S/": {"gateway"}, "/a.I/Debit": {"scan"}}
	tests := []struct {
		caller, method string
		ok             bool
	}{
		{"gateway", "/a.S/List", true},
		{"scan", "/a.S/List", false},
		{"scan", "/a.I/Debit", true},
		{"gateway", "/a.I/Debit", false},
		{"scan", "/a.I/Refund", false},
		{"operator", "/grpc.health.v1.Health/Check", true},
		{"gateway", "/a.Sx/List", false},
	}
	for _, tc := range tests {
		require.Equal(t, tc.ok, p.Allows(tc.caller, tc.method), "%s %s", tc.caller, tc.method)
	}
}

// whoAmI answers the health check with SERVING only when the call carried a
// verified principal of org "org-a", so tests can see what the guard attached.
type whoAmI struct {
	healthpb.UnimplementedHealthServer
}

func (whoAmI) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	p, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if p.OrgID != "org-a" {
		return nil, status.Error(codes.PermissionDenied, "wrong org")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func TestGuard(t *testing.T) {
	t.Parallel()
	ids := identities(t, "auth", "gateway", "scan")
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	_, otherPriv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	addr := freeAddr(t)
	p := New("auth", slog.New(slog.NewTextHandler(io.Discard, nil)), addr, freeAddr(t), Security{
		Identity: ids[0], Verifier: principal.NewVerifier(pub), Policy: Policy{"/vulnscan.Who/": {"gateway"}},
	})
	// The same handler under a second name that policy lists for gateway.
	desc := healthpb.Health_ServiceDesc
	desc.ServiceName = "vulnscan.Who"
	p.GRPC.RegisterService(&desc, whoAmI{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })

	call := func(cc *grpc.ClientConn, md metadata.MD, opts ...grpc.CallOption) error {
		out := new(healthpb.HealthCheckResponse)
		c, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), md), 10*time.Second)
		defer cancel()
		return cc.Invoke(c, "/vulnscan.Who/Check", &healthpb.HealthCheckRequest{}, out, opts...)
	}
	dial := func(id *mtls.Identity) *grpc.ClientConn {
		cc, err := Dial(addr, id, "auth")
		require.NoError(t, err)
		t.Cleanup(func() { _ = cc.Close() })
		return cc
	}
	gw, scan := dial(ids[1]), dial(ids[2])
	method := "/vulnscan.Who/Check"
	sign := func(k ed25519.PrivateKey, org, rid, m string) metadata.MD {
		tok, err := principal.NewSigner(k).Sign(principal.Principal{OrgID: org, UserID: "u"}, rid, m)
		require.NoError(t, err)
		return metadata.Pairs(principal.MetadataKey, tok, RequestIDKey, "rid-1")
	}

	// Waits for the server to listen.
	require.NoError(t, call(gw, sign(priv, "org-a", "rid-1", method), grpc.WaitForReady(true)))
	tests := []struct {
		name string
		cc   *grpc.ClientConn
		md   metadata.MD
		code codes.Code
	}{
		{"caller not in the allow-list", scan, sign(priv, "org-a", "rid-1", method), codes.PermissionDenied},
		{"raw metadata, no token", gw, metadata.Pairs("x-vulnscan-org-id", "org-a", "x-vulnscan-user-id", "u"), codes.Unauthenticated},
		{"token signed by another key", gw, sign(otherPriv, "org-a", "rid-1", method), codes.Unauthenticated},
		{"token for another method", gw, sign(priv, "org-a", "rid-1", "/vulnscan.Other/Check"), codes.Unauthenticated},
		{"token for another request", gw, sign(priv, "org-a", "rid-2", method), codes.Unauthenticated},
		{"garbage token", gw, metadata.Pairs(principal.MetadataKey, "abc.def", RequestIDKey, "rid-1"), codes.Unauthenticated},
	}
	for _, tc := range tests {
		require.Equal(t, tc.code, status.Code(call(tc.cc, tc.md)), tc.name)
	}

	// Without a client certificate the TLS handshake fails; without TLS the
	// connection is refused too.
	cfg := ids[1].ClientConfig("auth")
	cfg.Certificates = nil
	anon, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	require.NoError(t, err)
	defer anon.Close()
	require.Equal(t, codes.Unavailable, status.Code(call(anon, nil)))
	plain, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer plain.Close()
	require.Equal(t, codes.Unavailable, status.Code(call(plain, nil)))
}
