package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// snapshot is a read-only repeatable-read transaction on one connection
// whose BEGIN travels in the same round trip as its first statement, and
// whose COMMIT in the same round trip as its closing batch (see
// sendClosing), instead of each taking a round trip of its own: a search's
// key lookup, page and total share one snapshot in two round trips rather
// than four. Its statements must be read in full (rows closed, batches
// closed) before the next one is sent, as on any connection.
type snapshot struct {
	conn  *pgx.Conn
	state snapshotState
	// settings are SET LOCAL statements sent after the BEGIN, in its round
	// trip.
	settings []string
}

type snapshotState int

const (
	snapshotIdle   snapshotState = iota // BEGIN not sent yet
	snapshotOpen                        // BEGIN sent, COMMIT not
	snapshotClosed                      // COMMIT sent: no statement may follow
)

// snapshotTx is the transaction's mode; commitSnapshot and
// rollbackSnapshot end it.
var snapshotTx = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

const (
	commitSnapshot   = "COMMIT"
	rollbackSnapshot = "ROLLBACK"
)

// errSnapshotClosed is returned for a statement sent after the closing
// batch.
var errSnapshotClosed = errors.New("snapshot already committed")

// inSnapshot runs fn in a snapshot on a connection of pool, with settings
// (SET LOCAL statements) applied after its BEGIN, and ends it: when fn
// returns nil, by the COMMIT fn's closing batch carried or else by one of
// its own; otherwise by a ROLLBACK, so that the connection goes back to
// the pool outside any transaction (one left in a transaction, its
// ROLLBACK failing, is closed by the pool rather than reused).
func inSnapshot(ctx context.Context, pool *pgxpool.Pool, fn func(q batchDBTX) error, settings ...string) error {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	defer c.Release()
	s := &snapshot{conn: c.Conn(), settings: settings}
	// The server's transaction status says whether the transaction is
	// still open: a batch may fail before its BEGIN or its COMMIT ran.
	open := func() bool { return !s.conn.IsClosed() && s.conn.PgConn().TxStatus() != 'I' }
	if err := fn(s); err != nil {
		if open() {
			_, _ = s.conn.Exec(context.WithoutCancel(ctx), rollbackSnapshot)
		}
		return err
	}
	if open() {
		if _, err := s.conn.Exec(ctx, commitSnapshot); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	return nil
}

// opening returns b with BEGIN (and the snapshot's settings) queued
// before its statements when the transaction has not begun, and marks it
// begun; whether it did so.
func (s *snapshot) opening(b *pgx.Batch) (*pgx.Batch, bool, error) {
	switch s.state {
	case snapshotClosed:
		return nil, false, errSnapshotClosed
	case snapshotOpen:
		return b, false, nil
	}
	s.state = snapshotOpen
	nb := &pgx.Batch{}
	nb.BeginTx(snapshotTx)
	for _, set := range s.settings {
		nb.Queue(set)
	}
	nb.QueuedQueries = append(nb.QueuedQueries, b.QueuedQueries...)
	return nb, true, nil
}

// send sends b, BEGIN and the settings first when the transaction has
// not begun; the results returned start at b's first statement.
func (s *snapshot) send(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	nb, begun, err := s.opening(b)
	if err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	br := s.conn.SendBatch(ctx, nb)
	if !begun {
		return br
	}
	return &afterBegin{BatchResults: br, ahead: 1 + len(s.settings)}
}

// SendBatch sends b within the transaction.
func (s *snapshot) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return s.send(ctx, b)
}

// sendClosing sends b with COMMIT queued after its statements: the
// transaction ends with it, and no statement may follow. b's statements
// must be read through callbacks (QueuedQuery.Query, QueryRow, Exec)
// run by the results' Close.
func (s *snapshot) sendClosing(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if s.state == snapshotClosed {
		return pgx.FailedBatchResults(b, errSnapshotClosed)
	}
	b.Queue(commitSnapshot)
	br := s.send(ctx, b)
	s.state = snapshotClosed
	return br
}

// Query runs sql within the transaction.
func (s *snapshot) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	br := s.send(ctx, b)
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

// QueryRow runs sql within the transaction, for one row.
func (s *snapshot) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := s.Query(ctx, sql, args...)
	return &firstRow{rows: rows, err: err}
}

// Exec runs sql within the transaction.
func (s *snapshot) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	br := s.send(ctx, b)
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// afterBegin reads a batch whose first statements (ahead of them) are the
// BEGIN and settings that snapshot added, starting at the caller's first
// statement.
type afterBegin struct {
	pgx.BatchResults
	ahead int
}

func (a *afterBegin) skip() error {
	for ; a.ahead > 0; a.ahead-- {
		if _, err := a.BatchResults.Exec(); err != nil {
			a.ahead = 0
			return err
		}
	}
	return nil
}

func (a *afterBegin) Exec() (pgconn.CommandTag, error) {
	if err := a.skip(); err != nil {
		return pgconn.CommandTag{}, err
	}
	return a.BatchResults.Exec()
}

func (a *afterBegin) Query() (pgx.Rows, error) {
	if err := a.skip(); err != nil {
		return nil, err
	}
	return a.BatchResults.Query()
}

func (a *afterBegin) QueryRow() pgx.Row {
	if err := a.skip(); err != nil {
		return &firstRow{err: err}
	}
	return a.BatchResults.QueryRow()
}

// batchRows are a query's rows read from a batch of its own, which
// closing them closes.
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
	err    error
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if !r.closed {
		r.closed = true
		r.err = r.br.Close()
	}
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// firstRow is the first row of rows, as pgx.Row.
type firstRow struct {
	rows pgx.Rows
	err  error
}

func (r *firstRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}
