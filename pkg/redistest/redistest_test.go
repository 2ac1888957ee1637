package redistest

import (
	"context"
	"testing"
)

// TestClientTalksToTheServer: the client reaches the test server and
// round-trips a value.
func TestClientTalksToTheServer(t *testing.T) {
	rdb := Client(t)
	ctx := context.Background()
	key := "vulnscan:redistest:" + t.Name()
	if err := rdb.Set(ctx, key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Del(context.Background(), key) })
	if got, err := rdb.Get(ctx, key).Result(); err != nil || got != "v" {
		t.Fatalf("got %q, %v", got, err)
	}
}
