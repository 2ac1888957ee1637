package store

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// roundTrips counts what a connection sends: statements on their own
// and batches.
type roundTrips struct {
	mu              sync.Mutex
	queries, batchs int
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queries++
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batchs++
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (r *roundTrips) take() (queries, batchs int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	queries, batchs, r.queries, r.batchs = r.queries, r.batchs, 0, 0
	return queries, batchs
}

// TestSnapshot: a snapshot's statements run in one read-only
// repeatable-read transaction, which sees nothing committed after its
// first statement; its BEGIN travels with the first statement and its
// COMMIT with the closing batch, so that it costs no round trip of its
// own; a failed snapshot is rolled back, and the connection goes back to
// the pool outside any transaction.
func TestSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	plain := dbtest.New(t)
	if _, err := plain.Exec(ctx, `CREATE TABLE n (v int); INSERT INTO n VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	rt := &roundTrips{}
	pool := tracedPool(t, plain, rt, 1) // every snapshot on the same connection
	count := func(q batchDBTX) int {
		t.Helper()
		var n int
		if err := q.QueryRow(ctx, `SELECT count(*) FROM n`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	insert := func() {
		t.Helper()
		if _, err := plain.Exec(ctx, `INSERT INTO n VALUES (1)`); err != nil {
			t.Fatal(err)
		}
	}

	// A closing batch: two round trips for three statements and the
	// transaction.
	count(pool)
	rt.take()
	var iso, ro string
	var first, last int
	err := inSnapshot(ctx, pool, func(q batchDBTX) error {
		rows, err := q.Query(ctx, `SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only'), count(*) FROM n`)
		if err != nil {
			return err
		}
		if _, err := pgx.ForEachRow(rows, []any{&iso, &ro, &first}, func() error { return nil }); err != nil {
			return err
		}
		insert() // committed after the snapshot was taken
		b := &pgx.Batch{}
		b.Queue(`SELECT count(*) FROM n`).QueryRow(func(r pgx.Row) error { return r.Scan(&last) })
		if err := q.(*snapshot).sendClosing(ctx, b).Close(); err != nil {
			return err
		}
		if _, err := q.Query(ctx, `SELECT 1`); !errors.Is(err, errSnapshotClosed) {
			t.Errorf("a statement after the closing batch: %v, want %v", err, errSnapshotClosed)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if iso != "repeatable read" || ro != "on" || first != 1 || last != 1 {
		t.Errorf("isolation %q, read only %q, counts %d then %d; want repeatable read, on, 1 then 1", iso, ro, first, last)
	}
	if q, b := rt.take(); q != 0 || b != 2 {
		t.Errorf("snapshot sent %d statements and %d batches, want 0 and 2", q, b)
	}
	if n := count(pool); n != 2 {
		t.Errorf("after the snapshot %d rows, want 2", n)
	}

	// Without a closing batch: the COMMIT is a round trip of its own;
	// QueryRow, Exec and SendBatch all run in the transaction.
	rt.take()
	err = inSnapshot(ctx, pool, func(q batchDBTX) error {
		if _, err := q.Exec(ctx, `SELECT count(*) FROM n`); err != nil {
			return err
		}
		insert()
		first = count(q)
		b := &pgx.Batch{}
		b.Queue(`SELECT count(*) FROM n`)
		br := q.SendBatch(ctx, b)
		if err := br.QueryRow().Scan(&last); err != nil {
			return err
		}
		return br.Close()
	})
	if err != nil || first != 2 || last != 2 {
		t.Errorf("counts %d, %d (%v), want 2, 2", first, last, err)
	}
	if q, b := rt.take(); q != 1 || b != 3 {
		t.Errorf("snapshot sent %d statements and %d batches, want 1 (COMMIT) and 3", q, b)
	}

	// A failing statement ends the snapshot with its error, rolled back
	// on the same connection.
	var pid, again uint32
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	for _, fail := range []func(q batchDBTX) error{
		func(q batchDBTX) error { _, err := q.Exec(ctx, `SELECT no_such_column FROM n`); return err },
		func(q batchDBTX) error {
			count(q)
			_, err := q.Exec(ctx, `SELECT no_such_column FROM n`)
			return err
		},
		func(q batchDBTX) error {
			count(q)
			b := &pgx.Batch{}
			b.Queue(`SELECT no_such_column FROM n`)
			return q.(*snapshot).sendClosing(ctx, b).Close()
		},
	} {
		if err := inSnapshot(ctx, pool, fail); err == nil {
			t.Error("a failing statement: no error")
		}
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s := c.Conn().PgConn().TxStatus(); s != 'I' {
			t.Errorf("connection back in the pool in transaction status %q", s)
		}
		c.Release()
		if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&again); err != nil || again != pid {
			t.Errorf("connection %d after the failure (%v), want %d kept", again, err, pid)
		}
	}
	if n := count(pool); n != 3 {
		t.Errorf("after the failures %d rows, want 3", n)
	}
}
