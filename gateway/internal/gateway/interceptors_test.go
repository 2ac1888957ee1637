package gateway

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/vulnscan/vulnscan/pkg/principal"
)

// Both client interceptors hand the call on with the caller's token for
// that very method, and with none for a call made without a principal.
func TestSigningInterceptors(t *testing.T) {
	t.Parallel()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	s, v := principal.NewSigner(priv), principal.NewVerifier(pub)
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
