package gateway

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/principal"
)

// signerPair is a gateway signer and the verifier the services hold for it.
func signerPair(t *testing.T) (*principal.Signer, *principal.Verifier) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return principal.NewSigner(priv), principal.NewVerifier(pub)
}

// Calls of authenticated requests carry a token the services accept for
// their method; the token is reused across requests of the same caller.
// A request without an authenticated principal (a refused, revoked or
// unknown key never gets one) carries no token, cached or not.
func TestWithIdentity(t *testing.T) {
	t.Parallel()
	s, v := signerPair(t)
	p := principal.Principal{OrgID: "o", UserID: "u", KeyID: "k", Scopes: []string{"read"}}

	token := func(ctx context.Context) []string {
		ctx, err := withIdentity(ctx, s, "/vulnscan.auth.v1.AuthService/GetCredits")
		require.NoError(t, err)
		md, _ := metadata.FromOutgoingContext(ctx)
		return md.Get(principal.MetadataKey)
	}
	authed := func(rid string) context.Context {
		return context.WithValue(logging.WithRequestID(context.Background(), rid), principalKey, p)
	}
	first, second := token(authed("r1")), token(authed("r2"))
	require.Len(t, first, 1)
	require.Equal(t, first, second)
	got, err := v.Verify(second[0], "r2", "/vulnscan.auth.v1.AuthService/GetCredits")
	require.NoError(t, err)
	require.Equal(t, p, got)
	_, err = v.Verify(second[0], "r2", "/vulnscan.auth.v1.AuthService/RevokeKey")
	require.ErrorIs(t, err, principal.ErrBinding)

	require.Empty(t, token(logging.WithRequestID(context.Background(), "r3")))
}

// Both client interceptors hand the call on with the caller's token for
// that very method, and with none for a call made without a principal.
func TestSigningInterceptors(t *testing.T) {
	t.Parallel()
	s, v := signerPair(t)
	p := principal.Principal{OrgID: "o", UserID: "u", KeyID: "k", Scopes: []string{"write"}}
	const method = "/vulnscan.estimation.v1.UploadService/CreateUpload"

	tokenOf := func(ctx context.Context) []string {
		md, _ := metadata.FromOutgoingContext(ctx)
		return md.Get(principal.MetadataKey)
	}
	var unaryTokens, streamTokens []string
	invoker := func(ctx context.Context, m string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		require.Equal(t, method, m)
		unaryTokens = tokenOf(ctx)
		return nil
	}
	streamer := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, m string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
		require.Equal(t, method, m)
		streamTokens = tokenOf(ctx)
		return nil, nil
	}
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		signed bool
	}{
		{"authenticated", context.WithValue(context.Background(), principalKey, p), true},
		{"no principal", context.Background(), false},
	} {
		unaryTokens, streamTokens = nil, nil
		require.NoError(t, signUnary(s)(tc.ctx, method, nil, nil, nil, invoker), tc.name)
		_, err := signStream(s)(tc.ctx, &grpc.StreamDesc{ClientStreams: true}, nil, method, streamer)
		require.NoError(t, err, tc.name)
		if !tc.signed {
			require.Empty(t, unaryTokens, tc.name)
			require.Empty(t, streamTokens, tc.name)
			continue
		}
		for _, toks := range [][]string{unaryTokens, streamTokens} {
			require.Len(t, toks, 1, tc.name)
			got, err := v.Verify(toks[0], "", method)
			require.NoError(t, err, tc.name)
			require.Equal(t, p, got)
		}
	}
}
