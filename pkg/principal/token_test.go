package principal

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/config"
)

func TestTokenVerify(t *testing.T) {
	t.Parallel()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	pub2, priv2, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	now := time.Unix(1_800_000_000, 0)
	p := Principal{OrgID: "org", UserID: "user", KeyID: "key", Scopes: []string{"read"}}
	sign := func(k ed25519.PrivateKey, at time.Time) string {
		s := NewSigner(k)
		s.now = func() time.Time { return at }
		tok, err := s.Sign(p, "rid", "/m")
		require.NoError(t, err)
		return tok
	}
	good := sign(priv, now)
	tests := []struct {
		name, tok, rid, method string
		at                     time.Time
		want                   error
	}{
		{"valid", good, "rid", "/m", now, nil},
		{"valid near expiry", good, "rid", "/m", now.Add(TokenTTL), nil},
		{"expired", good, "rid", "/m", now.Add(TokenTTL + time.Minute), ErrExpired},
		{"from the future", good, "rid", "/m", now.Add(-time.Minute), ErrExpired},
		{"other method", good, "rid", "/other", now, ErrBinding},
		{"other request", good, "rid2", "/m", now, ErrBinding},
		{"unknown key", sign(priv2, now), "rid", "/m", now, ErrBadToken},
		{"tampered payload", "x" + good[1:], "rid", "/m", now, ErrBadToken},
		{"no signature", "abc", "rid", "/m", now, ErrBadToken},
		{"empty", "", "rid", "/m", now, ErrBadToken},
	}
	for _, tc := range tests {
		v := NewVerifier(pub)
		v.now = func() time.Time { return tc.at }
		got, err := v.Verify(tc.tok, tc.rid, tc.method)
		if tc.want != nil {
			require.ErrorIs(t, err, tc.want, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		require.Equal(t, p, got, tc.name)
	}
	// Rotation: a verifier holding both keys accepts both.
	v := NewVerifier(pub, pub2)
	v.now = func() time.Time { return now }
	_, err = v.Verify(sign(priv2, now), "rid", "/m")
	require.NoError(t, err)
}

func TestKeyFilesAndContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, GenerateKeys(dir))
	env := config.FromMap(map[string]string{"VULNSCAN_PKI_DIR": dir})
	s, err := SignerFromEnv(env)
	require.NoError(t, err)
	v, err := VerifierFromEnv(env)
	require.NoError(t, err)
	tok, err := s.Sign(Principal{OrgID: "o", UserID: "u"}, "r", "/m")
	require.NoError(t, err)
	p, err := v.Verify(tok, "r", "/m")
	require.NoError(t, err)

	_, err = From(context.Background())
	require.Error(t, err, "no verified principal, no caller")
	got, err := From(With(context.Background(), p))
	require.NoError(t, err)
	require.Equal(t, "o", got.OrgID)
}
