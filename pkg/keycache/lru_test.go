package keycache

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

func TestLRUEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	now := time.Now()
	later := now.Add(time.Minute)
	c := NewLRU(3)
	for _, h := range []string{"a", "b", "c"} {
		c.Put(h, Entry{Status: string(vocab.KeyActive), KeyID: h}, later)
	}
	_, ok := c.Get("a", now) // a becomes the most recent
	require.True(t, ok)
	c.Put("d", Entry{Status: string(vocab.KeyActive)}, later)
	require.Equal(t, 3, c.Len())
	_, ok = c.Get("b", now)
	require.False(t, ok, "the least recently used entry is evicted")
	for _, h := range []string{"a", "c", "d"} {
		_, ok := c.Get(h, now)
		require.True(t, ok, h)
	}

	// A flood of new hashes keeps the bound and never clears hot entries
	// more than the bound requires.
	_, _ = c.Get("a", now)
	for i := range 10000 {
		c.Put(fmt.Sprintf("flood-%d", i), Entry{Status: string(vocab.KeyUnknown)}, later)
		_, ok := c.Get("a", now)
		require.True(t, ok, "a hot entry survives the flood")
	}
	require.Equal(t, 3, c.Len())
}

func TestLRUExpiryAndDelete(t *testing.T) {
	t.Parallel()
	now := time.Now()
	c := NewLRU(10)
	c.Put("x", Entry{Status: string(vocab.KeyActive)}, now.Add(time.Second))
	_, ok := c.Get("x", now)
	require.True(t, ok)
	_, ok = c.Get("x", now.Add(time.Second))
	require.False(t, ok, "expired")
	require.Zero(t, c.Len())
	c.Put("y", Entry{}, now.Add(time.Minute))
	c.Delete("y")
	_, ok = c.Get("y", now)
	require.False(t, ok)
	c.Put("z", Entry{}, now.Add(time.Minute))
	c.Clear()
	require.Zero(t, c.Len())
}

func TestLRUDeleteFunc(t *testing.T) {
	t.Parallel()
	now := time.Now()
	later := now.Add(time.Minute)
	c := NewLRU(10)
	for _, h := range []string{"a", "b", "c", "d"} {
		id := "keep"
		if h == "b" || h == "d" {
			id = "drop"
		}
		c.Put(h, Entry{Status: string(vocab.KeyActive), KeyID: id}, later)
	}
	require.Equal(t, 2, c.DeleteFunc(func(e Entry) bool { return e.KeyID == "drop" }))
	require.Equal(t, 2, c.Len())
	for h, want := range map[string]bool{"a": true, "b": false, "c": true, "d": false} {
		_, ok := c.Get(h, now)
		require.Equal(t, want, ok, h)
	}
	// What is left still evicts in order: the list and the map agree.
	for i := range 10 {
		c.Put(fmt.Sprintf("n%d", i), Entry{}, later)
	}
	require.Equal(t, 10, c.Len())
	require.Zero(t, c.DeleteFunc(func(e Entry) bool { return e.KeyID == "drop" }))
}
