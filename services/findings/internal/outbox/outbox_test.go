package outbox_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/services/findings/internal/outbox"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestBackoff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		attempt int
		want    time.Duration
	}{{1, 30 * time.Second}, {2, time.Minute}, {4, 4 * time.Minute}, {10, 4 * time.Hour}, {30, 4 * time.Hour}} {
		got := outbox.Backoff(30*time.Second, 4*time.Hour, c.attempt)
		require.GreaterOrEqual(t, got, c.want*8/10, "attempt %d", c.attempt)
		require.LessOrEqual(t, got, c.want*12/10, "attempt %d", c.attempt)
	}
}

// TestRetry: the attempt that reaches MaxAttempts is the last one.
func TestRetry(t *testing.T) {
	t.Parallel()
	s := outbox.Schedule{BaseBackoff: time.Second, MaxBackoff: time.Minute, MaxAttempts: 3}
	for _, c := range []struct {
		attempt int
		final   bool
		want    time.Duration
	}{{1, false, time.Second}, {2, false, 2 * time.Second}, {3, true, 4 * time.Second}, {9, true, time.Minute}} {
		d, final := s.Retry(c.attempt)
		require.Equal(t, c.final, final, "attempt %d", c.attempt)
		require.InDelta(t, float64(c.want), float64(d), float64(c.want)*0.2, "attempt %d", c.attempt)
	}
}

// queue is an outbox in memory: Claim hands out up to n rows once each.
type queue struct {
	mu      sync.Mutex
	rows    []int
	claims  []int // how many rows each claim asked for
	leases  []time.Duration
	handled []int
	fail    error
}

func (q *queue) claim(_ context.Context, n int, lease time.Duration) ([]int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.claims = append(q.claims, n)
	q.leases = append(q.leases, lease)
	if q.fail != nil {
		return nil, q.fail
	}
	k := min(n, len(q.rows))
	out := q.rows[:k]
	q.rows = q.rows[k:]
	return out, nil
}

func (q *queue) deliver(ctx context.Context, row int) {
	if _, ok := ctx.Deadline(); !ok {
		panic("a delivery must have a deadline")
	}
	q.mu.Lock()
	q.handled = append(q.handled, row)
	q.mu.Unlock()
}

// TestWorkerOnce: one round claims a batch with the lease, delivers every
// row of it, and says whether the batch was full.
func TestWorkerOnce(t *testing.T) {
	t.Parallel()
	q := &queue{rows: []int{1, 2, 3, 4, 5}}
	w := &outbox.Worker[int]{Schedule: outbox.Schedule{Batch: 3}, Log: quiet, Name: "test", Claim: q.claim, Deliver: q.deliver}
	ctx := context.Background()
	more, err := w.Once(ctx)
	require.NoError(t, err)
	require.True(t, more, "a full batch")
	more, err = w.Once(ctx)
	require.NoError(t, err)
	require.False(t, more, "two rows of three")
	sort.Ints(q.handled)
	require.Equal(t, []int{1, 2, 3, 4, 5}, q.handled)
	require.Equal(t, []int{3, 3}, q.claims)
	require.Equal(t, []time.Duration{outbox.Lease, outbox.Lease}, q.leases)

	q.fail = errors.New("database gone")
	more, err = w.Once(ctx)
	require.ErrorIs(t, err, q.fail)
	require.False(t, more)
}

// TestWorkerRunDrains: Run goes on at once after a full batch, so a
// backlog larger than a batch is delivered without waiting for the poll
// interval, and returns nil when its context ends.
func TestWorkerRunDrains(t *testing.T) {
	t.Parallel()
	q := &queue{}
	for i := range 25 {
		q.rows = append(q.rows, i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &outbox.Worker[int]{Schedule: outbox.Schedule{Batch: 10, Poll: time.Hour}, Log: quiet, Name: "test", Claim: q.claim,
		Deliver: func(ctx context.Context, row int) {
			q.deliver(ctx, row)
			q.mu.Lock()
			if len(q.handled) == 25 {
				cancel()
			}
			q.mu.Unlock()
		}}
	require.NoError(t, w.Run(ctx))
	require.Len(t, q.handled, 25)
	require.Equal(t, []int{10, 10, 10}, q.claims, "three claims in one burst: 10, 10, then 5")
}

// TestLoopStopsBurstOnError: a failing round ends the burst (no busy loop)
// and Run returns when the context ends.
func TestLoopStopsBurstOnError(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	rounds := 0
	err := outbox.Loop(ctx, time.Hour, quiet, "round failed", func(context.Context) (bool, error) {
		rounds++
		cancel()
		return true, errors.New("boom")
	})
	require.NoError(t, err)
	require.Equal(t, 1, rounds)
}
