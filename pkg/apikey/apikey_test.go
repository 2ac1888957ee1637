package apikey

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGenerateIsWellFormedAndUnique(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		key, prefix, hash, err := Generate()
		require.NoError(t, err)
		require.True(t, WellFormed(key), key)
		require.True(t, strings.HasPrefix(key, prefix))
		require.Len(t, hash, 64)
		require.NotContains(t, hash, key)
		require.False(t, seen[key])
		seen[key] = true
	}
}

func TestWellFormedRejects(t *testing.T) {
	t.Parallel()
	key, _, _, err := Generate()
	require.NoError(t, err)
	flipped := []byte(key)
	if flipped[10] == 'a' {
		flipped[10] = 'b'
	} else {
		flipped[10] = 'a'
	}
	for _, bad := range []string{"", "vsk_", "Bearer abc", key + "x", key[:len(key)-1], "xsk_" + key[4:], string(flipped), strings.Replace(key, key[5:6], "-", 1)} {
		require.False(t, WellFormed(bad), bad)
	}
}

func FuzzWellFormed(f *testing.F) {
	key, _, _, _ := Generate()
	f.Add(key)
	f.Add("vsk_0000")
	f.Fuzz(func(t *testing.T, s string) {
		if WellFormed(s) && (len(s) != keyLen || !strings.HasPrefix(s, Prefix)) {
			t.Fatalf("accepted %q", s)
		}
	})
}
