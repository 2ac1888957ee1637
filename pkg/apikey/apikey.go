// Package apikey defines the API key format: "vsk_" followed by 32 random
// base62 characters and a 6-character base62 CRC-32 checksum of them. The
// checksum lets the gateway reject mistyped or malformed keys without a
// lookup; only the SHA-256 of a key is ever stored (keys carry 190 bits of
// randomness, so an unsalted hash is safe and makes lookup by hash possible).
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"math/big"
	"strings"
)

// Prefix starts every key.
const Prefix = "vsk_"

const (
	alphabet  = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	bodyLen   = 32
	sumLen    = 6
	keyLen    = len(Prefix) + bodyLen + sumLen
	displayed = len(Prefix) + 8
)

// Generate returns a new key, its display prefix and its hash.
func Generate() (key, prefix, hash string, err error) {
	var b strings.Builder
	b.WriteString(Prefix)
	max := big.NewInt(int64(len(alphabet)))
	for i := 0; i < bodyLen; i++ {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", "", "", err
		}
		b.WriteByte(alphabet[n.Int64()])
	}
	body := b.String()[len(Prefix):]
	b.WriteString(checksum(body))
	key = b.String()
	return key, key[:displayed], Hash(key), nil
}

func checksum(body string) string {
	n := crc32.ChecksumIEEE([]byte(body))
	out := make([]byte, sumLen)
	for i := sumLen - 1; i >= 0; i-- {
		out[i] = alphabet[n%62]
		n /= 62
	}
	return string(out)
}

// WellFormed reports whether key has the key format and a valid checksum.
func WellFormed(key string) bool {
	if len(key) != keyLen || !strings.HasPrefix(key, Prefix) {
		return false
	}
	for i := len(Prefix); i < len(key); i++ {
		if strings.IndexByte(alphabet, key[i]) < 0 {
			return false
		}
	}
	body := key[len(Prefix) : len(Prefix)+bodyLen]
	return key[len(Prefix)+bodyLen:] == checksum(body)
}

// Hash returns the lowercase hex SHA-256 of key.
func Hash(key string) string {
	s := sha256.Sum256([]byte(key))
	return hex.EncodeToString(s[:])
}
