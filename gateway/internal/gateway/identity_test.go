package gateway

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"

	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/principal"
)

// Calls of authenticated requests carry a token the services accept for
// their method; the token is reused across requests of the same caller.
// A request without an authenticated principal (a refused, revoked or
// unknown key never gets one) carries no token, cached or not.
func TestWithIdentity(t *testing.T) {
	t.Parallel()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	s, v := principal.NewSigner(priv), principal.NewVerifier(pub)
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
