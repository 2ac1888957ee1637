package keycache

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/redistest"
	"github.com/vulnscan/vulnscan/pkg/vocab"
)

func TestKeyNamespacesHashes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ hash, want string }{
		{"abc", "vulnscan:apikey:abc"},
		{"", "vulnscan:apikey:"},
		{"deadbeef:x", "vulnscan:apikey:deadbeef:x"},
	} {
		require.Equal(t, tc.want, Key(tc.hash))
	}
}

func TestRevokeWritesTombstoneAndPublishes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Client(t)
	hash := fmt.Sprintf("revoke-test-%d", time.Now().UnixNano())
	other := hash + "-child"
	t.Cleanup(func() { rdb.Del(context.Background(), Key(hash), Key(other)) })

	// A verified entry cached by a gateway is overwritten by the tombstone.
	active, err := json.Marshal(Entry{Status: string(vocab.KeyActive), KeyID: "k1"})
	require.NoError(t, err)
	require.NoError(t, rdb.Set(ctx, Key(hash), active, TTL).Err())

	sub := rdb.Subscribe(ctx, Channel)
	t.Cleanup(func() { _ = sub.Close() })
	_, err = sub.Receive(ctx) // subscription confirmation
	require.NoError(t, err)

	require.NoError(t, Revoke(ctx, rdb), "nothing to revoke is no round trip")
	require.NoError(t, Revoke(ctx, rdb, hash, other))

	msgCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	heard := map[string]bool{}
	for !heard[hash] || !heard[other] {
		msg, err := sub.ReceiveMessage(msgCtx)
		require.NoError(t, err)
		require.Equal(t, Channel, msg.Channel)
		heard[msg.Payload] = true // other tests may revoke concurrently
	}

	for _, h := range []string{hash, other} {
		raw, err := rdb.Get(ctx, Key(h)).Bytes()
		require.NoError(t, err)
		var got Entry
		require.NoError(t, json.Unmarshal(raw, &got))
		require.Equal(t, Entry{Status: string(vocab.KeyRevoked)}, got)

		ttl, err := rdb.TTL(ctx, Key(h)).Result()
		require.NoError(t, err)
		require.Greater(t, ttl, TTL, "the tombstone outlives any verified entry")
		require.LessOrEqual(t, ttl, TombstoneTTL)
	}
}

func TestRevokeReportsRedisFailure(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Revoke(ctx, rdb, "never-written")
	require.Error(t, err)
	require.Contains(t, err.Error(), "publish key revocation")
}

func TestLRUPutReplacesAndRefreshes(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tc := range []struct {
		name   string
		size   int
		puts   []string
		absent []string
		kept   []string
	}{
		{name: "zero size holds one", size: 0, puts: []string{"a", "b"}, absent: []string{"a"}, kept: []string{"b"}},
		{name: "negative size holds one", size: -5, puts: []string{"a", "b", "c"}, absent: []string{"a", "b"}, kept: []string{"c"}},
		{name: "re-put refreshes recency", size: 2, puts: []string{"a", "b", "a", "c"}, absent: []string{"b"}, kept: []string{"a", "c"}},
		{name: "re-put does not grow", size: 2, puts: []string{"a", "a", "a"}, kept: []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewLRU(tc.size)
			for i, h := range tc.puts {
				c.Put(h, Entry{Status: string(vocab.KeyActive), KeyID: fmt.Sprint(i)}, now.Add(time.Hour))
			}
			require.Equal(t, len(tc.kept), c.Len())
			for _, h := range tc.absent {
				_, ok := c.Get(h, now)
				require.False(t, ok, h)
			}
			for _, h := range tc.kept {
				_, ok := c.Get(h, now)
				require.True(t, ok, h)
			}
		})
	}

	// A re-put replaces both the entry and its expiry.
	c := NewLRU(4)
	c.Put("k", Entry{Status: string(vocab.KeyActive)}, now.Add(time.Second))
	c.Put("k", Entry{Status: string(vocab.KeyRevoked)}, now.Add(time.Hour))
	e, ok := c.Get("k", now.Add(time.Minute))
	require.True(t, ok)
	require.Equal(t, string(vocab.KeyRevoked), e.Status)
	c.Delete("missing") // deleting an absent hash is harmless
	require.Equal(t, 1, c.Len())
}

func TestLRUConcurrentUseKeepsBound(t *testing.T) {
	t.Parallel()
	now := time.Now()
	c := NewLRU(16)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				h := fmt.Sprintf("w%d-%d", w, i%40)
				c.Put(h, Entry{KeyID: h}, now.Add(time.Hour))
				if e, ok := c.Get(h, now); ok && e.KeyID != h {
					t.Errorf("Get(%q) = entry of %q", h, e.KeyID)
				}
				if i%7 == 0 {
					c.Delete(h)
				}
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, c.Len(), 16)
}
