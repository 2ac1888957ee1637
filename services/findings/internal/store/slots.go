package store

import (
	"context"
	"fmt"
	"sync/atomic"
)

// IntakeSlots bounds the findings reports written at once by one process.
//
// A report is one transaction that inserts each finding into about forty
// indexes (the lists', the searches', the tags' and the occurrences'), and
// almost all of its cost is the database's CPU. Reports of one organization
// insert at the same right-hand edge of those indexes (they are ordered by
// the time a finding was found and by its time-ordered id), so reports
// running side by side contend for the same index pages: on a two-core
// database, two at once record about 1.15× the findings of one, four
// about 0.9× and thirty-two about 0.85×, each extra one spending database CPU
// on waiting for the same pages. Reports beyond the bound wait here for a
// slot, in the order they came, instead of inside the database; the wait
// honours the request's deadline and cancellation. The bound is per
// process (FINDINGS_INTAKE_CONCURRENCY, by default the process's
// GOMAXPROCS, which follows its CPU limit), so that replicas add to it.
type IntakeSlots struct {
	slots   chan struct{}
	waiting atomic.Int64
}

// NewIntakeSlots returns a bound of n reports at once; n must be at least 1.
func NewIntakeSlots(n int) (*IntakeSlots, error) {
	if n < 1 {
		return nil, fmt.Errorf("intake concurrency must be at least 1, not %d", n)
	}
	return &IntakeSlots{slots: make(chan struct{}, n)}, nil
}

// acquire waits for a slot; the returned function gives it back. A nil
// bound admits every report at once.
func (l *IntakeSlots) acquire(ctx context.Context) (func(), error) {
	if l == nil {
		return func() {}, nil
	}
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	default:
	}
	l.waiting.Add(1)
	defer l.waiting.Add(-1)
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for an intake slot: %w", ctx.Err())
	}
}

func (l *IntakeSlots) release() { <-l.slots }

// Waiting is the number of reports waiting for a slot.
func (l *IntakeSlots) Waiting() int64 { return l.waiting.Load() }
