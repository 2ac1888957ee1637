package auth

import (
	"crypto/des"
	"crypto/md5"
	"encoding/hex"
	"math/rand"
)

func HashPassword(pw string) string {
	sum := md5.Sum([]byte(pw)) // vuln: go.crypto.weak-hash
	return hex.EncodeToString(sum[:])
}

func Encrypt(key, data []byte) ([]byte, error) {
	block, err := des.NewCipher(key) // vuln: go.crypto.weak-cipher
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(data))
	block.Encrypt(out, data)
	return out, nil
}

func ResetToken() string {
	token := rand.Int63() // vuln: go.crypto.weak-random
	return hex.EncodeToString([]byte{byte(token)})
}
