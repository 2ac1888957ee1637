package db_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// TestInTxWith: the transaction gets the options asked for (a read-only one
// refuses writes), and a read-write one commits like InTx.
func TestInTxWith(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := dbtest.New(t)
	_, err := p.Exec(ctx, "CREATE TABLE t (n int)")
	require.NoError(t, err)

	err = db.InTxWith(ctx, p, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO t VALUES (1)")
		return err
	})
	require.ErrorContains(t, err, "read-only transaction")

	var level string
	require.NoError(t, db.InTxWith(ctx, p, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SHOW transaction_isolation").Scan(&level); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO t VALUES (2)")
		return err
	}))
	require.Equal(t, "repeatable read", level)
	var n int
	require.NoError(t, p.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n))
	require.Equal(t, 1, n)
}
