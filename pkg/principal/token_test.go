package principal

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
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

// signRaw signs an arbitrary payload the way Sign does, so that tests can
// present well-signed tokens whose content is wrong.
func signRaw(key ed25519.PrivateKey, payload string) string {
	return payload + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(key, []byte("vulnscan-identity-v1."+payload)))
}

func TestVerifyRefusesWellSignedNonsense(t *testing.T) {
	t.Parallel()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	now := time.Now().Unix()
	for _, tc := range []struct {
		name, tok string
	}{
		{"payload not base64", signRaw(priv, "!!not-base64!!")},
		{"payload not JSON", signRaw(priv, b64("not json"))},
		{"no organization", signRaw(priv, b64(fmt.Sprintf(`{"usr":"u","rid":"r","mth":"/m","iat":%d,"exp":%d}`, now, now+60)))},
		{"no user", signRaw(priv, b64(fmt.Sprintf(`{"org":"o","rid":"r","mth":"/m","iat":%d,"exp":%d}`, now, now+60)))},
		{"signature not base64", b64(`{}`) + ".***"},
		{"signature too short", b64(`{}`) + "." + b64("short")},
		{"two dots", signRaw(priv, b64(`{}`)) + ".x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewVerifier(pub).Verify(tc.tok, "r", "/m")
			require.ErrorIs(t, err, ErrBadToken)
		})
	}
	// The same construction with good claims verifies: the cases above
	// fail for their content, not for how they were built.
	good := signRaw(priv, b64(fmt.Sprintf(`{"org":"o","usr":"u","rid":"r","mth":"/m","iat":%d,"exp":%d}`, now, now+60)))
	p, err := NewVerifier(pub).Verify(good, "r", "/m")
	require.NoError(t, err)
	require.Equal(t, Principal{OrgID: "o", UserID: "u"}, p)
	_, err = NewVerifier().Verify(good, "r", "/m")
	require.ErrorIs(t, err, ErrBadToken, "a verifier without keys trusts nothing")
}

func TestKeyFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, b, 0o600))
		return path
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ecPriv, err := x509.MarshalPKCS8PrivateKey(ecKey)
	require.NoError(t, err)
	ecPub, err := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	require.NoError(t, err)
	edPriv, err := x509.MarshalPKCS8PrivateKey(edKey)
	require.NoError(t, err)
	pemOf := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }

	signers := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "none.key"), "read identity signing key"},
		{"not PEM", write("text.key", []byte("hello")), "is not PEM"},
		{"not PKCS8", write("junk.key", pemOf("PRIVATE KEY", []byte("junk"))), "parse "},
		{"not Ed25519", write("ec.key", pemOf("PRIVATE KEY", ecPriv)), "is not an Ed25519 key"},
	}
	for _, tc := range signers {
		t.Run("signer "+tc.name, func(t *testing.T) {
			_, err := SignerFromEnv(config.FromMap(map[string]string{"VULNSCAN_IDENTITY_SIGNING_KEY": tc.path}))
			require.ErrorContains(t, err, tc.want)
		})
	}
	ok, err := SignerFromEnv(config.FromMap(map[string]string{"VULNSCAN_IDENTITY_SIGNING_KEY": write("ed.key", pemOf("PRIVATE KEY", edPriv))}))
	require.NoError(t, err)
	require.NotNil(t, ok)

	verifiers := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "none.pub"), "read identity verification keys"},
		{"no PEM block", write("text.pub", []byte("hello")), "holds no public key"},
		{"not PKIX", write("junk.pub", pemOf("PUBLIC KEY", []byte("junk"))), "parse "},
		{"not Ed25519", write("ec.pub", pemOf("PUBLIC KEY", ecPub)), "holds a key that is not Ed25519"},
	}
	for _, tc := range verifiers {
		t.Run("verifier "+tc.name, func(t *testing.T) {
			_, err := VerifierFromEnv(config.FromMap(map[string]string{"VULNSCAN_IDENTITY_VERIFY_KEYS": tc.path}))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestVerifyKeysFileHoldsSeveralKeys(t *testing.T) {
	t.Parallel()
	oldDir, newDir := t.TempDir(), t.TempDir()
	require.NoError(t, GenerateKeys(oldDir))
	require.NoError(t, GenerateKeys(newDir))
	oldPub, err := os.ReadFile(filepath.Join(oldDir, VerifyKeysFile))
	require.NoError(t, err)
	newPub, err := os.ReadFile(filepath.Join(newDir, VerifyKeysFile))
	require.NoError(t, err)
	both := filepath.Join(t.TempDir(), "both.pub")
	require.NoError(t, os.WriteFile(both, append(newPub, oldPub...), 0o600))
	v, err := VerifierFromEnv(config.FromMap(map[string]string{"VULNSCAN_IDENTITY_VERIFY_KEYS": both}))
	require.NoError(t, err)
	for _, dir := range []string{oldDir, newDir} {
		s, err := SignerFromEnv(config.FromMap(map[string]string{"VULNSCAN_PKI_DIR": dir}))
		require.NoError(t, err)
		tok, err := s.Sign(Principal{OrgID: "o", UserID: "u"}, "r", "/m")
		require.NoError(t, err)
		_, err = v.Verify(tok, "r", "/m")
		require.NoError(t, err, "during a rotation tokens of either key verify")
	}
}

func TestGenerateKeysKeepsAnExistingKey(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pki", "nested")
	require.NoError(t, GenerateKeys(dir), "the directory is created")
	info, err := os.Stat(filepath.Join(dir, SigningKeyFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the private key is readable by its owner only")
	before, err := os.ReadFile(filepath.Join(dir, SigningKeyFile))
	require.NoError(t, err)
	require.NoError(t, GenerateKeys(dir))
	after, err := os.ReadFile(filepath.Join(dir, SigningKeyFile))
	require.NoError(t, err)
	require.Equal(t, before, after)

	// A file where the directory should be is an error, not a silent skip.
	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o600))
	require.Error(t, GenerateKeys(filepath.Join(notDir, "pki")))
}
