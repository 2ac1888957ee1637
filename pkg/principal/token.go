package principal

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/mtls"
)

// MetadataKey is the gRPC metadata key of the gateway-signed identity token.
const MetadataKey = "x-vulnscan-identity"

// TokenTTL is how long a signed identity is accepted. It covers one request
// from the gateway to a service, not a session: nothing stores a token.
const TokenTTL = 60 * time.Second

// clockSkew tolerates clocks of different hosts being slightly apart.
const clockSkew = 5 * time.Second

// claims is what the gateway signs. The gRPC method binds a token to one
// method: a token captured from one call cannot be replayed against another
// method, and it expires within TokenTTL. A token signed by Sign is also
// bound to one request id; the tokens the gateway reuses (Token) carry none,
// since the request id travels beside the token in the same metadata and
// binding to it adds nothing against someone replaying both.
type claims struct {
	Org       string   `json:"org"`
	User      string   `json:"usr"`
	Key       string   `json:"kid,omitempty"`
	Scopes    []string `json:"scp"`
	RequestID string   `json:"rid,omitempty"`
	Method    string   `json:"mth"`
	Issued    int64    `json:"iat"`
	Expires   int64    `json:"exp"`
}

// Signer signs identities; only the gateway holds one.
type Signer struct {
	key    ed25519.PrivateKey
	now    func() time.Time
	issued issuedTokens
}

// NewSigner returns a Signer for an Ed25519 private key.
func NewSigner(key ed25519.PrivateKey) *Signer { return &Signer{key: key, now: time.Now} }

// Sign returns the token asserting p for one call of method with requestID.
func (s *Signer) Sign(p Principal, requestID, method string) (string, error) {
	return s.sign(p, requestID, method, s.now())
}

func (s *Signer) sign(p Principal, requestID, method string, now time.Time) (string, error) {
	body, err := json.Marshal(claims{Org: p.OrgID, User: p.UserID, Key: p.KeyID, Scopes: p.Scopes, RequestID: requestID, Method: method,
		Issued: now.Unix(), Expires: now.Add(TokenTTL).Unix()})
	if err != nil {
		return "", fmt.Errorf("sign identity: %w", err)
	}
	enc := base64.RawURLEncoding
	payload := enc.EncodeToString(body)
	return payload + "." + enc.EncodeToString(ed25519.Sign(s.key, []byte("vulnscan-identity-v1."+payload))), nil
}

// Verifier checks tokens against one or more public keys (several during a
// rotation of the gateway's signing key).
type Verifier struct {
	keys     []ed25519.PublicKey
	now      func() time.Time
	verified verifiedTokens
}

// NewVerifier returns a Verifier trusting keys.
func NewVerifier(keys ...ed25519.PublicKey) *Verifier { return &Verifier{keys: keys, now: time.Now} }

// Token errors.
var (
	ErrBadToken = errors.New("identity token is malformed or its signature does not verify")
	ErrExpired  = errors.New("identity token expired")
	ErrBinding  = errors.New("identity token was issued for another call")
)

// Verify returns the principal of tok when its signature verifies, it has not
// expired and it was issued for method (and for requestID, when it names a
// request). A token that passed every check is remembered until it expires,
// so that its signature is checked once; its lifetime and binding are
// checked again on every call.
func (v *Verifier) Verify(tok, requestID, method string) (Principal, error) {
	now := v.now()
	c, cached := v.verified.get(tok)
	if !cached {
		var err error
		if c, err = v.parse(tok); err != nil {
			return Principal{}, err
		}
	}
	if now.After(c.expiry()) || now.Before(time.Unix(c.Issued, 0).Add(-clockSkew)) {
		if cached {
			v.verified.drop(tok)
		}
		return Principal{}, ErrExpired
	}
	if c.Method != method || c.RequestID != "" && c.RequestID != requestID {
		return Principal{}, ErrBinding
	}
	if !cached {
		v.verified.put(tok, c, now)
	}
	return Principal{OrgID: c.Org, UserID: c.User, KeyID: c.Key, Scopes: c.Scopes}, nil
}

// parse checks tok's signature against the trusted keys and decodes its claims.
func (v *Verifier) parse(tok string) (claims, error) {
	payload, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return claims{}, ErrBadToken
	}
	enc := base64.RawURLEncoding
	rawSig, err := enc.DecodeString(sig)
	if err != nil || len(rawSig) != ed25519.SignatureSize {
		return claims{}, ErrBadToken
	}
	signed := []byte("vulnscan-identity-v1." + payload)
	valid := false
	for _, k := range v.keys {
		if ed25519.Verify(k, signed, rawSig) {
			valid = true
			break
		}
	}
	if !valid {
		return claims{}, ErrBadToken
	}
	body, err := enc.DecodeString(payload)
	if err != nil {
		return claims{}, ErrBadToken
	}
	var c claims
	if err := json.Unmarshal(body, &c); err != nil || c.Org == "" || c.User == "" {
		return claims{}, ErrBadToken
	}
	// Principals handed out share this slice: clip it so that an append
	// by one of them copies instead of writing into the others.
	c.Scopes = slices.Clip(c.Scopes)
	return c, nil
}

// expiry is the last instant the token is accepted.
func (c claims) expiry() time.Time { return time.Unix(c.Expires, 0).Add(clockSkew) }

// Key files. The gateway reads the private key from
// VULNSCAN_IDENTITY_SIGNING_KEY (default <pki dir>/identity.key); every
// service reads the public keys from VULNSCAN_IDENTITY_VERIFY_KEYS (default
// <pki dir>/identity.pub, one or more PEM blocks).
const (
	SigningKeyFile = "identity.key"
	VerifyKeysFile = "identity.pub"
)

func pkiDir(env *config.Env) string { return mtls.PKIDir(env) }

// SignerFromEnv loads the gateway's signing key.
func SignerFromEnv(env *config.Env) (*Signer, error) {
	path := env.String("VULNSCAN_IDENTITY_SIGNING_KEY", filepath.Join(pkiDir(env), SigningKeyFile))
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read identity signing key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%s is not PEM", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s is not an Ed25519 key", path)
	}
	return NewSigner(ek), nil
}

// VerifierFromEnv loads the public keys a service accepts.
func VerifierFromEnv(env *config.Env) (*Verifier, error) {
	path := env.String("VULNSCAN_IDENTITY_VERIFY_KEYS", filepath.Join(pkiDir(env), VerifyKeysFile))
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read identity verification keys: %w", err)
	}
	var keys []ed25519.PublicKey
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		k, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		ek, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("%s holds a key that is not Ed25519", path)
		}
		keys = append(keys, ek)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s holds no public key", path)
	}
	return NewVerifier(keys...), nil
}

// GenerateKeys writes a signing key and its public key into dir unless a
// signing key is already there. For local runs and tests.
func GenerateKeys(dir string) error {
	priv := filepath.Join(dir, SigningKeyFile)
	if _, err := os.Stat(priv); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	pder, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, VerifyKeysFile), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pder})); err != nil {
		return err
	}
	return writeFile(priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
}

func writeFile(path string, b []byte) error {
	if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
