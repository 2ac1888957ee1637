package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"math/rand"
	"time"
)

var gen = rand.New(rand.NewSource(time.Now().UnixNano()))

// newSealer makes a fresh data key for one archive.
func newSealer() (cipher.AEAD, []byte, error) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(gen.Intn(256))
	}
	block, err := aes.NewCipher(key) // vuln: go.weakrand.token
	if err != nil {
		return nil, nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	return aead, aead.Seal(nil, nonce, []byte("header"), nil), nil // vuln: go.weakrand.token
}
