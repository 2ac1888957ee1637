// Package secretbox encrypts secrets at rest (auth instructions, repository
// tokens) with AES-256-GCM. The key comes from VULNSCAN_SECRET_KEY (32 bytes,
// base64 or hex); when that is unset a key is generated once into
// <data dir>/secret.key (mode 0600) and reused by every process sharing the
// data directory.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const version byte = 1

// Box seals and opens secrets with one key.
type Box struct{ aead cipher.AEAD }

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != 32 {
		return nil, errors.New("secret key must be 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Load returns the Box for the configured key: encoded (VULNSCAN_SECRET_KEY)
// when set, otherwise the key file in dataDir, created when missing.
func Load(encoded, dataDir string) (*Box, error) {
	if encoded != "" {
		key, err := decodeKey(encoded)
		if err != nil {
			return nil, fmt.Errorf("VULNSCAN_SECRET_KEY: %w", err)
		}
		return New(key)
	}
	key, err := keyFile(filepath.Join(dataDir, "secret.key"))
	if err != nil {
		return nil, err
	}
	return New(key)
}

func decodeKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return b, nil
		}
	}
	return nil, errors.New("must be 32 bytes encoded as base64 or hex")
}

func keyFile(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, werr := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
		cerr := f.Close()
		if werr != nil || cerr != nil {
			return nil, fmt.Errorf("write secret key file: %w", errors.Join(werr, cerr))
		}
		return key, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create secret key file: %w", err)
	}
	// Another process is creating it: wait for its content.
	for i := 0; i < 50; i++ {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read secret key file: %w", err)
		}
		if strings.HasSuffix(string(b), "\n") {
			return decodeKey(string(b))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, errors.New("secret key file is incomplete")
}

// Seal encrypts plaintext.
func (b *Box) Seal(plaintext []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append([]byte{version}, nonce...)
	return b.aead.Seal(out, nonce, plaintext, nil), nil
}

// Open decrypts what Seal produced.
func (b *Box) Open(sealed []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != version {
		return nil, errors.New("secretbox: malformed ciphertext")
	}
	pt, err := b.aead.Open(nil, sealed[1:1+n], sealed[1+n:], nil)
	if err != nil {
		return nil, errors.New("secretbox: cannot decrypt (wrong key?)")
	}
	return pt, nil
}
