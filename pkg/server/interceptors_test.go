package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/vulnscan/vulnscan/pkg/mtls"
)

// callerCtx is the context of a call whose verified client certificate is
// identity's.
func callerCtx(t *testing.T, dir, identity string) context.Context {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, identity+".crt"))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	info := credentials.TLSInfo{State: tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}}}
	return peer.NewContext(context.Background(), &peer.Peer{AuthInfo: info})
}

// A public request's call from the gateway is in the gateway's access line:
// the service logs it only at debug level unless it failed on the server
// side. Calls from other identities keep their info line.
func TestRPCLogLevel(t *testing.T) {
	dir := t.TempDir()
	if err := mtls.Generate(dir, mtls.Gateway, mtls.Scan, mtls.Operator); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		caller string
		code   codes.Code
		want   slog.Level
	}{
		{mtls.Gateway, codes.OK, slog.LevelDebug},
		{mtls.Gateway, codes.NotFound, slog.LevelDebug},
		{mtls.Gateway, codes.InvalidArgument, slog.LevelDebug},
		{mtls.Gateway, codes.Internal, slog.LevelError},
		{mtls.Gateway, codes.Unknown, slog.LevelError},
		{mtls.Scan, codes.OK, slog.LevelInfo},
		{mtls.Scan, codes.Internal, slog.LevelError},
		{mtls.Operator, codes.OK, slog.LevelInfo},
		{"", codes.OK, slog.LevelInfo},
	} {
		ctx := context.Background()
		if c.caller != "" {
			ctx = callerCtx(t, dir, c.caller)
		}
		if got := rpcLogLevel(ctx, c.code); got != c.want {
			t.Errorf("caller %q, code %s: level %s, want %s", c.caller, c.code, got, c.want)
		}
	}
}
