package logging

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// writes records each Write call the destination gets.
type writes struct {
	mu    sync.Mutex
	calls []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, string(p))
	return len(p), nil
}

func (w *writes) snapshot() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.calls...)
}

// msgs are the messages of the records in the written batches, in order.
func msgs(t *testing.T, calls []string) []string {
	t.Helper()
	var out []string
	for _, c := range calls {
		for _, r := range records(t, bytes.NewBufferString(c)) {
			out = append(out, r["msg"].(string))
		}
	}
	return out
}

func TestBatchWritesInBatches(t *testing.T) {
	t.Setenv("LOG_LEVEL", "")
	dst := &writes{}
	b := NewBatch(dst, time.Hour) // no timed flush in this test
	log := New(b, "svc")
	ctx := context.Background()

	log.InfoContext(ctx, "one")
	log.InfoContext(ctx, "two")
	if got := dst.snapshot(); len(got) != 0 {
		t.Fatalf("info records are written before a flush: %q", got)
	}
	log.WarnContext(ctx, "three")
	got := dst.snapshot()
	if len(got) != 1 || strings.Join(msgs(t, got), ",") != "one,two,three" {
		t.Fatalf("a warn record writes the batch up to it in one call; got %d calls: %v", len(got), msgs(t, got))
	}

	// A batch that reaches its size is written without waiting.
	long := strings.Repeat("x", 1024)
	for range batchBytes / 1024 {
		log.InfoContext(ctx, long)
	}
	if got := dst.snapshot(); len(got) != 2 {
		t.Fatalf("a full batch is written at once; %d calls", len(got))
	}

	log.InfoContext(ctx, "four")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	got = dst.snapshot()
	if m := msgs(t, got[len(got)-1:]); len(m) == 0 || m[len(m)-1] != "four" {
		t.Fatalf("Close writes what waits; last batch %v", m)
	}
	log.InfoContext(ctx, "after close")
	if m := msgs(t, dst.snapshot()); m[len(m)-1] != "after close" {
		t.Fatalf("after Close records are written at once; last %q", m[len(m)-1])
	}
	if n := len(msgs(t, dst.snapshot())); n != 3+batchBytes/1024+2 {
		t.Fatalf("%d records written, want every one", n)
	}
}

func TestBatchFlushesOnItsOwn(t *testing.T) {
	dst := &writes{}
	b := NewBatch(dst, time.Millisecond)
	defer func() { _ = b.Close() }()
	New(b, "svc").InfoContext(context.Background(), "waiting")
	for deadline := time.Now().Add(time.Minute); len(dst.snapshot()) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the flusher never wrote the record")
		}
	}
	if m := msgs(t, dst.snapshot()); strings.Join(m, ",") != "waiting" {
		t.Fatalf("written %v", m)
	}
}
