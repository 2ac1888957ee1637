package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/config"
)

var rowA = AD{Table: "auth.connected_repos", Column: "token_enc", Row: "org-a/github.com/a/a"}

func TestSealOpen(t *testing.T) {
	t.Parallel()
	b, err := Load(Keys{Service: "auth", DataDir: t.TempDir()})
	require.NoError(t, err)
	ct, err := b.Seal([]byte("Authorization: Bearer s3cret"), rowA)
	require.NoError(t, err)
	require.NotContains(t, string(ct), "s3cret")
	pt, legacy, err := b.Open(ct, rowA)
	require.NoError(t, err)
	require.False(t, legacy)
	require.Equal(t, "Authorization: Bearer s3cret", string(pt))

	ct[len(ct)-1] ^= 1
	_, _, err = b.Open(ct, rowA)
	require.Error(t, err)
	_, _, err = b.Open([]byte{9, 1, 2}, rowA)
	require.Error(t, err)
}

// A ciphertext copied to another row, column or table does not open.
func TestBoundToRowAndPurpose(t *testing.T) {
	t.Parallel()
	b, err := Load(Keys{Service: "findings", DataDir: t.TempDir()})
	require.NoError(t, err)
	ad := AD{Table: "findings.integrations", Column: "token_enc", Row: "11111111-1111-1111-1111-111111111111"}
	ct, err := b.Seal([]byte("xoxb-token"), ad)
	require.NoError(t, err)
	for name, other := range map[string]AD{
		"other row":    {Table: ad.Table, Column: ad.Column, Row: "22222222-2222-2222-2222-222222222222"},
		"other column": {Table: ad.Table, Column: "secret_enc", Row: ad.Row},
		"other table":  {Table: "scan.scans", Column: ad.Column, Row: ad.Row},
	} {
		_, _, err := b.Open(ct, other)
		require.ErrorIs(t, err, ErrOpen, name)
	}
}

// Services derive different keys from one master key: what one sealed,
// another cannot open, even for the same associated data.
func TestKeyPerService(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	auth, err := Load(Keys{Service: "auth", DataDir: dir})
	require.NoError(t, err)
	scan, err := Load(Keys{Service: "scan", DataDir: dir})
	require.NoError(t, err)
	auth2, err := Load(Keys{Service: "auth", DataDir: dir})
	require.NoError(t, err)
	ct, err := auth.Seal([]byte("x"), rowA)
	require.NoError(t, err)
	_, _, err = scan.Open(ct, rowA)
	require.ErrorIs(t, err, ErrOpen)
	pt, _, err := auth2.Open(ct, rowA)
	require.NoError(t, err)
	require.Equal(t, "x", string(pt))
}

// Version 1 values (master key, no associated data) still open and are
// reported as legacy so that they get re-sealed.
func TestLegacyValuesOpen(t *testing.T) {
	t.Parallel()
	master := make([]byte, 32)
	_, _ = rand.Read(master)
	block, err := aes.NewCipher(master)
	require.NoError(t, err)
	aead, err := cipher.NewGCM(block)
	require.NoError(t, err)
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	old := aead.Seal(append([]byte{1}, nonce...), nonce, []byte("old secret"), nil)

	b, err := Load(Keys{Service: "auth", Master: encodeHex(master)})
	require.NoError(t, err)
	pt, legacy, err := b.Open(old, rowA)
	require.NoError(t, err)
	require.True(t, legacy)
	require.Equal(t, "old secret", string(pt))
	require.True(t, Legacy(old))
}

// A rotated-out key named in Previous still opens what it sealed.
func TestRotation(t *testing.T) {
	t.Parallel()
	k1 := "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	k2 := "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100"
	dir := t.TempDir()
	before, err := Load(Keys{Service: "scan", Own: k1, DataDir: dir})
	require.NoError(t, err)
	ct, err := before.Seal([]byte("x"), rowA)
	require.NoError(t, err)
	after, err := Load(Keys{Service: "scan", Own: k2, DataDir: dir})
	require.NoError(t, err)
	_, _, err = after.Open(ct, rowA)
	require.ErrorIs(t, err, ErrOpen)
	during, err := Load(Keys{Service: "scan", Own: k2, Previous: []string{k1}, DataDir: dir})
	require.NoError(t, err)
	pt, _, err := during.Open(ct, rowA)
	require.NoError(t, err)
	require.Equal(t, "x", string(pt))
}

// A retired master key still opens through the key derived from it.
func TestMasterRotation(t *testing.T) {
	t.Parallel()
	k1 := "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	k2 := "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100"
	before, err := Load(Keys{Service: "auth", Master: k1})
	require.NoError(t, err)
	ct, err := before.Seal([]byte("x"), rowA)
	require.NoError(t, err)
	after, err := Load(Keys{Service: "auth", Master: k2})
	require.NoError(t, err)
	_, _, err = after.Open(ct, rowA)
	require.ErrorIs(t, err, ErrOpen)
	during, err := Load(Keys{Service: "auth", Master: k2, PreviousMasters: []string{k1}})
	require.NoError(t, err)
	pt, _, err := during.Open(ct, rowA)
	require.NoError(t, err)
	require.Equal(t, "x", string(pt))
	// The new value is sealed with the new key.
	ct2, err := during.Seal([]byte("y"), rowA)
	require.NoError(t, err)
	_, _, err = after.Open(ct2, rowA)
	require.NoError(t, err)
}

func encodeHex(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
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
			b, err := Load(Keys{Service: "findings", DataDir: dir})
			require.NoError(t, err)
			boxes[i] = b
		}()
	}
	wg.Wait()
	ct, err := boxes[0].Seal([]byte("x"), rowA)
	require.NoError(t, err)
	for _, b := range boxes[1:] {
		pt, _, err := b.Open(ct, rowA)
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
			_, err := Load(Keys{Service: "auth", Master: tc.key, DataDir: t.TempDir()})
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}

const (
	hexKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	b64Key = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
)

func TestLoadNamesTheFailingSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		keys Keys
		want string
	}{
		{"bad master", Keys{Service: "auth", Master: "short"}, "VULNSCAN_SECRET_KEY: must be 32 bytes"},
		{"bad own key", Keys{Service: "auth", Master: hexKey, Own: "short"}, "AUTH_SECRET_KEY: must be 32 bytes"},
		{"no service to derive for", Keys{Master: hexKey}, "a service name is required"},
		{"bad previous key", Keys{Service: "scan", Master: hexKey, Previous: []string{b64Key, "nope"}}, "SCAN_PREVIOUS_SECRET_KEYS: must be 32 bytes"},
		{"bad previous master", Keys{Service: "scan", Master: hexKey, PreviousMasters: []string{"nope"}}, "VULNSCAN_PREVIOUS_SECRET_KEYS: must be 32 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.keys)
			require.ErrorContains(t, err, tc.want)
		})
	}
	// An own key needs no service name to derive from.
	_, err := Load(Keys{Master: hexKey, Own: b64Key})
	require.NoError(t, err)
}

func TestKeyEncodings(t *testing.T) {
	t.Parallel()
	raw := make([]byte, 32)
	for i := range raw {
		raw[i] = byte(i)
	}
	for _, s := range []string{hexKey, " " + hexKey + "\n", b64Key,
		"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",  // unpadded
		"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", // padded
	} {
		got, err := decodeKey(s)
		require.NoError(t, err, "%q", s)
		require.Equal(t, raw, got, "%q", s)
	}
	for _, s := range []string{"", hexKey[:62], hexKey + "00", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd"} {
		_, err := decodeKey(s)
		require.Error(t, err, "%q", s)
	}
	for _, n := range []int{0, 16, 31, 33} {
		_, err := New(make([]byte, n))
		require.Error(t, err, "a %d-byte key", n)
	}
}

func TestOpenRefusesMalformedValues(t *testing.T) {
	t.Parallel()
	withLegacy, err := Load(Keys{Service: "auth", Master: hexKey})
	require.NoError(t, err)
	raw := make([]byte, 32)
	noLegacy, err := New(raw)
	require.NoError(t, err)
	sealed, err := withLegacy.Seal([]byte("x"), rowA)
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		box    *Box
		sealed []byte
		want   error // nil: any error but ErrOpen
	}{
		{"empty", withLegacy, nil, nil},
		{"unknown version", withLegacy, append([]byte{3}, sealed[1:]...), nil},
		{"version 2 cut before the nonce ends", withLegacy, sealed[:1+4+5], nil},
		{"version 1 cut before the nonce ends", withLegacy, []byte{1, 2, 3}, nil},
		{"version 1 without a legacy key", noLegacy, append([]byte{1}, make([]byte, 40)...), ErrOpen},
		{"sealed with a key this box does not hold", noLegacy, sealed, ErrOpen},
		{"version 1 that does not open", withLegacy, append([]byte{1}, make([]byte, 40)...), ErrOpen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tc.box.Open(tc.sealed, rowA)
			require.Error(t, err)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			} else {
				require.NotErrorIs(t, err, ErrOpen)
				require.ErrorContains(t, err, "malformed")
			}
		})
	}
	require.False(t, Legacy(sealed))
	require.False(t, Legacy(nil))
	require.True(t, Legacy([]byte{1, 0}))
}

func TestKeysFromEnv(t *testing.T) {
	t.Parallel()
	env := config.FromMap(map[string]string{
		"VULNSCAN_SECRET_KEY":            " " + hexKey + " ",
		"FINDINGS_SECRET_KEY":            b64Key,
		"FINDINGS_PREVIOUS_SECRET_KEYS":  "a, b ,,c",
		"VULNSCAN_PREVIOUS_SECRET_KEYS":  "m1",
		"SCAN_SECRET_KEY":                "not-mine",
		"SCAN_PREVIOUS_SECRET_KEYS":      "not-mine",
		"VULNSCAN_PREVIOUS_SECRET_KEYS2": "ignored",
	})
	require.Equal(t, Keys{Service: "findings", Master: hexKey, Own: b64Key, Previous: []string{"a", "b", "c"},
		PreviousMasters: []string{"m1"}, DataDir: "/data"}, KeysFromEnv(env, "findings", "/data"))
	require.Equal(t, Keys{Service: "auth", DataDir: "d"}, KeysFromEnv(config.FromMap(nil), "auth", "d"))
}

func TestKeyFileInAnUnwritablePlace(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err := Load(Keys{Service: "auth", DataDir: filepath.Join(file, "data")})
	require.ErrorContains(t, err, "create data dir")

	// A complete key file written by another process is read, not replaced.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secret.key"), []byte(b64Key+"\n"), 0o600))
	fromFile, err := Load(Keys{Service: "auth", DataDir: dir})
	require.NoError(t, err)
	fromEnv, err := Load(Keys{Service: "auth", Master: hexKey})
	require.NoError(t, err)
	sealed, err := fromFile.Seal([]byte("x"), rowA)
	require.NoError(t, err)
	pt, _, err := fromEnv.Open(sealed, rowA)
	require.NoError(t, err, "the file's key is the master key")
	require.Equal(t, "x", string(pt))
}
