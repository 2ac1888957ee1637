package db

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Conflicted reports whether err is the server aborting a transaction for
// a deadlock (40P01) or a serialization failure (40001): the transaction
// was rolled back whole and may simply run again.
func Conflicted(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// InTxRetrying is InTx, run again, up to attempts runs in all, while the
// server aborts the transaction as Conflicted, after a short pause that
// grows with each run and is jittered so that the transactions that
// collided do not collide again. fn must leave nothing outside the
// transaction that a second run would repeat or find half done (assign
// results, do not append to them). The last error is returned.
func InTxRetrying(ctx context.Context, db TxBeginner, attempts int, fn func(tx pgx.Tx) error) error {
	for run := 1; ; run++ {
		err := InTx(ctx, db, fn)
		if err == nil || run >= attempts || !Conflicted(err) {
			return err
		}
		pause := time.Duration(run) * (2*time.Millisecond + rand.N(8*time.Millisecond))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}
