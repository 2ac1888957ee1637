// safe: go.weakrand.token go.crypto.weak-random
package vault

import (
	"crypto/aes"
	"crypto/cipher"
	crand "crypto/rand"
	"math/rand"
	"time"
)

// newSealer makes a fresh data key for one archive.
func newSealer() (cipher.AEAD, error) {
	key := make([]byte, 32)
	if _, err := crand.Read(key); err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// retry waits a little, with jitter, between attempts.
func retry(attempts int, op func() error) error {
	var err error
	for i := 0; i < attempts; i++ {
		if err = op(); err == nil {
			return nil
		}
		pause := time.Duration(100+rand.Intn(250)) * time.Millisecond
		time.Sleep(pause)
	}
	return err
}
