package secretbox

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSealOpen(t *testing.T) {
	t.Parallel()
	b, err := Load("", t.TempDir())
	require.NoError(t, err)
	ct, err := b.Seal([]byte("Authorization: Bearer s3cret"))
	require.NoError(t, err)
	require.NotContains(t, string(ct), "s3cret")
	pt, err := b.Open(ct)
	require.NoError(t, err)
	require.Equal(t, "Authorization: Bearer s3cret", string(pt))

	ct[len(ct)-1] ^= 1
	_, err = b.Open(ct)
	require.Error(t, err)
	_, err = b.Open([]byte{9, 1, 2})
	require.Error(t, err)
}

func TestKeyFileSharedByConcurrentProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	boxes := make([]*Box, 8)
	var wg sync.WaitGroup
	for i := range boxes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := Load("", dir)
			require.NoError(t, err)
			boxes[i] = b
		}()
	}
	wg.Wait()
	ct, err := boxes[0].Seal([]byte("x"))
	require.NoError(t, err)
	for _, b := range boxes[1:] {
		pt, err := b.Open(ct)
		require.NoError(t, err)
		require.Equal(t, "x", string(pt))
	}
	require.FileExists(t, filepath.Join(dir, "secret.key"))
}

func TestLoadFromEnvironment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, key string
		ok        bool
	}{
		{"hex", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", true},
		{"base64", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", true},
		{"short", "abcd", false},
		{"garbage", "not a key at all, not a key at all!!", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.key, t.TempDir())
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}
