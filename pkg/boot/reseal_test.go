package boot

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
)

// Values sealed in the legacy format (shared master key, no associated
// data) are re-sealed on start: bound to their row, opened with the
// service's key, and the migration is idempotent.
func TestResealLegacyValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	_, err := pool.Exec(ctx, `CREATE SCHEMA svc; CREATE TABLE svc.things (id text PRIMARY KEY, secret bytea)`)
	require.NoError(t, err)

	master := make([]byte, 32)
	_, _ = rand.Read(master)
	block, err := aes.NewCipher(master)
	require.NoError(t, err)
	aead, err := cipher.NewGCM(block)
	require.NoError(t, err)
	legacy := func(pt string) []byte {
		nonce := make([]byte, aead.NonceSize())
		_, _ = rand.Read(nonce)
		return aead.Seal(append([]byte{1}, nonce...), nonce, []byte(pt), nil)
	}
	box, err := secretbox.Load(secretbox.Keys{Service: "svc", Master: hex.EncodeToString(master)})
	require.NoError(t, err)
	ad := func(id string) secretbox.AD { return secretbox.AD{Table: "svc.things", Column: "secret", Row: id} }
	current, err := box.Seal([]byte("already new"), ad("c"))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO svc.things VALUES ('a', $1), ('b', $2), ('c', $3), ('d', NULL), ('e', '')`,
		legacy("secret a"), legacy("secret b"), current)
	require.NoError(t, err)

	m := Reseal(box, SealedColumn{Table: "svc.things", Column: "secret", Key: "id", RowExpr: "id"})
	for range 2 {
		require.NoError(t, m(ctx, pool))
	}
	for id, want := range map[string]string{"a": "secret a", "b": "secret b", "c": "already new"} {
		var sealed []byte
		require.NoError(t, pool.QueryRow(ctx, `SELECT secret FROM svc.things WHERE id = $1`, id).Scan(&sealed))
		require.False(t, secretbox.Legacy(sealed), id)
		pt, wasLegacy, err := box.Open(sealed, ad(id))
		require.NoError(t, err, id)
		require.False(t, wasLegacy)
		require.Equal(t, want, string(pt))
	}
	// Re-sealed values are bound to their row.
	var a []byte
	require.NoError(t, pool.QueryRow(ctx, `SELECT secret FROM svc.things WHERE id = 'a'`).Scan(&a))
	_, _, err = box.Open(a, ad("b"))
	require.ErrorIs(t, err, secretbox.ErrOpen)
}
