package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/db"
)

// balanceReadTimeout bounds one coalesced balance statement. It runs on
// behalf of every caller of its batch, so no one caller's cancellation stops
// it; each caller still returns as soon as its own context ends.
const balanceReadTimeout = 10 * time.Second

// balanceReads coalesces concurrent balance reads into one statement, the
// way a database coalesces commits: while one statement is in flight, the
// reads that arrive join the next batch, which runs as one statement
// (`org_id = ANY(...)`) when the one in flight is answered. A batch is sent
// only after every read in it arrived, so each read sees every change
// committed before it was asked, exactly as its own statement would have:
// coalescing never returns a balance older than the caller's request. With
// one read at a time nothing waits: the read runs at once, as its own
// statement. Under load the database runs one statement per batch instead of
// one per read (GET /v1/credits is what dashboards and CI poll).
//
// The zero value is ready to use.
type balanceReads struct {
	mu      sync.Mutex
	running bool          // a balance statement is in flight
	next    *balanceBatch // the batch collecting reads, nil if none
}

// balanceBatch is one statement's worth of reads.
type balanceBatch struct {
	ctx      context.Context // the first read's: its values go with the statement
	orgs     []string        // distinct
	has      map[string]bool // orgs, as a set
	reads    int             // reads waiting on the batch
	done     chan struct{}   // closed when balances and err are set
	balances map[string]int32
	err      error
}

// read returns org's balance. With nothing in flight it runs its own
// statement, on its own context, as a read without batching would; otherwise
// it joins the collecting batch and returns when that batch is answered or
// ctx ends, whichever comes first.
func (r *balanceReads) read(ctx context.Context, q pgxQuerier, org string) (int32, error) {
	r.mu.Lock()
	if !r.running {
		r.running = true
		r.mu.Unlock()
		defer r.handOff(q)
		return queryBalance(ctx, q, org)
	}
	b := r.next
	if b == nil {
		b = &balanceBatch{ctx: ctx, has: map[string]bool{}, done: make(chan struct{})}
		r.next = b
	}
	b.add(org)
	b.reads++
	r.mu.Unlock()

	select {
	case <-b.done:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if b.err != nil {
		return 0, b.err
	}
	bal, ok := b.balances[org]
	if !ok {
		return 0, ErrNotFound
	}
	return bal, nil
}

func (b *balanceBatch) add(org string) {
	if !b.has[org] {
		b.has[org] = true
		b.orgs = append(b.orgs, org)
	}
}

// handOff is called when a statement was answered: the batch that collected
// meanwhile, if any, runs on a goroutine of its own, so that the caller
// returns with its answer.
func (r *balanceReads) handOff(q pgxQuerier) {
	r.mu.Lock()
	b := r.next
	r.next, r.running = nil, b != nil
	r.mu.Unlock()
	if b != nil {
		go r.run(q, b)
	}
}

// run answers b, then the batch that collected meanwhile, if any, and so on
// until none did. A batch's statement keeps the values of its first read's
// context (trace, request id) but not its cancellation: it answers every
// read of the batch.
func (r *balanceReads) run(q pgxQuerier, b *balanceBatch) {
	for b != nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(b.ctx), balanceReadTimeout)
		b.balances, b.err = queryBalances(sctx, q, b.orgs)
		cancel()
		close(b.done)

		r.mu.Lock()
		b = r.next
		r.next, r.running = nil, b != nil
		r.mu.Unlock()
	}
}

// pgxQuerier is what a balance statement needs of the pool.
type pgxQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// queryBalance reads the balance of org.
func queryBalance(ctx context.Context, q pgxQuerier, org string) (int32, error) {
	rows, err := q.Query(ctx, `SELECT balance FROM auth.credit_balances WHERE org_id = $1`, org)
	if err != nil {
		return 0, fmt.Errorf("read balance: %w", err)
	}
	bal, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[int32])
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("read balance: %w", err)
	}
	return bal, nil
}

// queryBalances reads the balances of orgs in one statement.
func queryBalances(ctx context.Context, q pgxQuerier, orgs []string) (map[string]int32, error) {
	var (
		rows pgx.Rows
		err  error
	)
	if len(orgs) == 1 {
		rows, err = q.Query(ctx, `SELECT org_id::text, balance FROM auth.credit_balances WHERE org_id = $1`, orgs[0])
	} else {
		rows, err = q.Query(ctx, `SELECT org_id::text, balance FROM auth.credit_balances WHERE org_id = ANY($1::uuid[])`, db.UUIDArray(orgs))
	}
	if err != nil {
		return nil, fmt.Errorf("read balances: %w", err)
	}
	out := make(map[string]int32, len(orgs))
	var (
		org string
		bal int32
	)
	_, err = pgx.ForEachRow(rows, []any{&org, &bal}, func() error {
		out[org] = bal
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read balances: %w", err)
	}
	return out, nil
}
