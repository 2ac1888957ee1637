// Package secretbox encrypts secrets at rest (auth instructions, repository
// tokens, integration credentials) with AES-256-GCM.
//
// Keys. The master key comes from VULNSCAN_SECRET_KEY (32 bytes, base64 or
// hex); when that is unset a key is generated once into
// <data dir>/secret.key (mode 0600) and reused by every process sharing the
// data directory. Each service seals with its own key: <SERVICE>_SECRET_KEY
// when set, otherwise a key derived from the master key with HKDF-SHA256 and
// the service's name, so a service never holds a key that opens another
// service's secrets even though one variable configures them all. Keys named
// in <SERVICE>_PREVIOUS_SECRET_KEYS (comma-separated), and keys derived from
// the retired master keys in VULNSCAN_PREVIOUS_SECRET_KEYS, still open what
// they sealed, which is how a key is rotated.
//
// Format. A sealed value is 0x02, a 4-byte key id, a 12-byte nonce and the
// GCM ciphertext; the associated data names the table, the column and the row
// the value belongs to (AD), so a ciphertext copied to another row, column or
// table does not open. Version 1 values (no key id, master key, no
// associated data) written before this format still open, reported as
// legacy, and boot.Reseal rewrites them in the new format on start.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vulnscan/vulnscan/pkg/config"
)

const (
	legacyVersion byte = 1
	version       byte = 2
	idLen              = 4
)

// AD is what a ciphertext is bound to: the table, the column (purpose) and
// the row (its primary key, or the natural key a row is upserted by).
type AD struct{ Table, Column, Row string }

func (a AD) bytes() []byte {
	return []byte("vulnscan-secretbox-v2\x00" + a.Table + "\x00" + a.Column + "\x00" + a.Row)
}

type key struct {
	id   [idLen]byte
	aead cipher.AEAD
}

func newKey(raw []byte) (key, error) {
	if len(raw) != 32 {
		return key{}, errors.New("secret key must be 32 bytes")
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return key{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return key{}, err
	}
	k := key{aead: aead}
	sum := sha256.Sum256(append([]byte("vulnscan-secretbox-key-id\x00"), raw...))
	copy(k.id[:], sum[:idLen])
	return k, nil
}

// Box seals with one key and opens with it, the previous keys, and (for
// version 1 values) the legacy master key.
type Box struct {
	current  key
	previous []key
	legacy   *key
}

// New returns a Box sealing with a 32-byte key (no legacy key).
func New(raw []byte) (*Box, error) {
	k, err := newKey(raw)
	if err != nil {
		return nil, err
	}
	return &Box{current: k}, nil
}

// Keys configures a service's Box.
type Keys struct {
	Service string
	// Master is VULNSCAN_SECRET_KEY (empty: the data directory's key file).
	Master string
	// Own is <SERVICE>_SECRET_KEY (empty: derived from the master key).
	Own string
	// Previous are <SERVICE>_PREVIOUS_SECRET_KEYS, still accepted for opening.
	Previous []string
	// PreviousMasters are VULNSCAN_PREVIOUS_SECRET_KEYS: retired master keys
	// whose derived service keys still open.
	PreviousMasters []string
	DataDir         string
}

// Load returns the Box of a service.
func Load(k Keys) (*Box, error) {
	var master []byte
	var err error
	if k.Master != "" {
		if master, err = decodeKey(k.Master); err != nil {
			return nil, fmt.Errorf("VULNSCAN_SECRET_KEY: %w", err)
		}
	} else if master, err = keyFile(filepath.Join(k.DataDir, "secret.key")); err != nil {
		return nil, err
	}
	var raw []byte
	if k.Own != "" {
		if raw, err = decodeKey(k.Own); err != nil {
			return nil, fmt.Errorf("%s_SECRET_KEY: %w", strings.ToUpper(k.Service), err)
		}
	} else {
		if k.Service == "" {
			return nil, errors.New("secretbox: a service name is required to derive its key")
		}
		if raw, err = derive(master, k.Service); err != nil {
			return nil, err
		}
	}
	b, err := New(raw)
	if err != nil {
		return nil, err
	}
	for _, p := range k.Previous {
		pr, err := decodeKey(p)
		if err != nil {
			return nil, fmt.Errorf("%s_PREVIOUS_SECRET_KEYS: %w", strings.ToUpper(k.Service), err)
		}
		pk, err := newKey(pr)
		if err != nil {
			return nil, err
		}
		b.previous = append(b.previous, pk)
	}
	for _, p := range k.PreviousMasters {
		pm, err := decodeKey(p)
		if err != nil {
			return nil, fmt.Errorf("VULNSCAN_PREVIOUS_SECRET_KEYS: %w", err)
		}
		d, err := derive(pm, k.Service)
		if err != nil {
			return nil, err
		}
		pk, err := newKey(d)
		if err != nil {
			return nil, err
		}
		b.previous = append(b.previous, pk)
	}
	lk, err := newKey(master)
	if err != nil {
		return nil, err
	}
	b.legacy = &lk
	return b, nil
}

// derive returns a service's key derived from a master key.
func derive(master []byte, service string) ([]byte, error) {
	return hkdf.Key(sha256.New, master, []byte("vulnscan-secretbox"), "service:"+service, 32)
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

// Seal encrypts plaintext bound to ad.
func (b *Box) Seal(plaintext []byte, ad AD) ([]byte, error) {
	nonce := make([]byte, b.current.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append([]byte{version}, b.current.id[:]...)
	out = append(out, nonce...)
	return b.current.aead.Seal(out, nonce, plaintext, ad.bytes()), nil
}

// ErrOpen is returned for a value that does not open: wrong key, tampered,
// or sealed for another row, column or table.
var ErrOpen = errors.New("secretbox: cannot decrypt (wrong key, or sealed for another row or purpose)")

// Open decrypts what Seal produced for the same ad. legacy reports a
// version 1 value, which the caller should re-seal.
func (b *Box) Open(sealed []byte, ad AD) (plaintext []byte, legacy bool, err error) {
	if len(sealed) == 0 {
		return nil, false, errors.New("secretbox: malformed ciphertext")
	}
	switch sealed[0] {
	case version:
		n := b.current.aead.NonceSize()
		if len(sealed) < 1+idLen+n {
			return nil, false, errors.New("secretbox: malformed ciphertext")
		}
		id, rest := sealed[1:1+idLen], sealed[1+idLen:]
		for _, k := range append([]key{b.current}, b.previous...) {
			if string(k.id[:]) != string(id) {
				continue
			}
			pt, err := k.aead.Open(nil, rest[:n], rest[n:], ad.bytes())
			if err != nil {
				return nil, false, ErrOpen
			}
			return pt, false, nil
		}
		return nil, false, ErrOpen
	case legacyVersion:
		if b.legacy == nil {
			return nil, false, ErrOpen
		}
		n := b.legacy.aead.NonceSize()
		if len(sealed) < 1+n {
			return nil, false, errors.New("secretbox: malformed ciphertext")
		}
		pt, err := b.legacy.aead.Open(nil, sealed[1:1+n], sealed[1+n:], nil)
		if err != nil {
			return nil, false, ErrOpen
		}
		return pt, true, nil
	}
	return nil, false, errors.New("secretbox: malformed ciphertext")
}

// Legacy reports whether sealed is in the version 1 format.
func Legacy(sealed []byte) bool { return len(sealed) > 0 && sealed[0] == legacyVersion }

// KeysFromEnv reads a service's keys: VULNSCAN_SECRET_KEY, <SERVICE>_SECRET_KEY
// and <SERVICE>_PREVIOUS_SECRET_KEYS.
func KeysFromEnv(env *config.Env, service, dataDir string) Keys {
	up := strings.ToUpper(service)
	return Keys{Service: service, Master: env.String("VULNSCAN_SECRET_KEY", ""), Own: env.String(up+"_SECRET_KEY", ""),
		Previous: env.List(up + "_PREVIOUS_SECRET_KEYS"), PreviousMasters: env.List("VULNSCAN_PREVIOUS_SECRET_KEYS"), DataDir: dataDir}
}
