package gateway

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBucketsLimitAndRefill(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	b := newBuckets(2, 3, 10)
	b.now = func() time.Time { return now }
	for i := 2; i >= 0; i-- {
		ok, remaining, _ := b.take("k")
		require.True(t, ok)
		require.Equal(t, i, remaining)
	}
	ok, _, wait := b.take("k")
	require.False(t, ok, "the burst is spent")
	require.Equal(t, 500*time.Millisecond, wait)
	empty, _ := b.empty("k")
	require.True(t, empty)
	ok, _, _ = b.take("other")
	require.True(t, ok, "keys are limited separately")
	now = now.Add(500 * time.Millisecond)
	ok, _, _ = b.take("k")
	require.True(t, ok, "one token back after 1/rate")
}

func TestBucketsStayBounded(t *testing.T) {
	t.Parallel()
	b := newBuckets(1, 1, 5)
	for i := range 1000 {
		b.take(string(rune('a' + i%26)))
	}
	require.LessOrEqual(t, b.ll.Len(), 5)
	require.Len(t, b.items, b.ll.Len())
}

func TestUploadSlots(t *testing.T) {
	t.Parallel()
	u := newUploadSlots(1, 2, 3)
	require.True(t, u.acquire("k1", "o1"))
	require.False(t, u.acquire("k1", "o1"), "per key")
	require.True(t, u.acquire("k2", "o1"))
	require.False(t, u.acquire("k3", "o1"), "per organization")
	require.True(t, u.acquire("k4", "o2"))
	require.False(t, u.acquire("k5", "o3"), "global")
	u.release("k1", "o1")
	require.True(t, u.acquire("k5", "o3"))
	require.Equal(t, 3, u.inProgress())
}

func TestClientRequestID(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"abc-1.2:3", "abc-1.2:3"},
		{"forged<script>\n", "forgedscript"},
		{"\x00\x00x", "x"},
		{"é日本", ""},
		{strings.Repeat("a", 500), strings.Repeat("a", maxClientRequestID)},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, clientRequestID(tc.in), "%q", tc.in)
	}
}

// TestMinRateBodyWindows: the first window starts at the handler's first
// read, not when the body is wrapped, so time the gateway spends before
// reading is not held against the client; from then on a window that does
// not bring the minimum cuts the body, and a filled one starts the next.
func TestMinRateBodyWindows(t *testing.T) {
	var cut bool
	b := newMinRateBody(io.NopCloser(strings.NewReader("0123456789abcdef")), httptest.NewRecorder(), time.Second, 4, &cut)
	clock := time.Now() // a clock the test moves, from the body's wrapping
	b.now = func() time.Time { return clock }
	clock = clock.Add(1500 * time.Millisecond) // the gateway is busy before reading, for longer than a window
	p := make([]byte, 4)
	if n, err := b.Read(p); n != 4 || err != nil || cut {
		t.Fatalf("first read after the gateway's own delay: %d bytes, %v, cut %v", n, err, cut)
	}
	clock = clock.Add(900 * time.Millisecond) // the window was filled: a new one began
	if n, err := b.Read(p[:2]); n != 2 || err != nil || cut {
		t.Fatalf("read within the next window: %d bytes, %v, cut %v", n, err, cut)
	}
	clock = clock.Add(1100 * time.Millisecond) // 2 bytes of 4 in that window
	if _, err := b.Read(p); !errors.Is(err, errTooSlow) || !cut {
		t.Fatalf("read after an unfilled window: %v, cut %v; want it cut", err, cut)
	}
}
