// Package storetest gives the scan service's unit tests a store on a
// database of their own, migrated as the service migrates its own (the scan
// tables and River's job tables, both in schema "scan"), cloned from a
// template so that each test starts in a fraction of a second.
package storetest

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/boot"
	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// Migrate applies what the service applies at start.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if err := store.Migrate(ctx, pool); err != nil {
		return err
	}
	return boot.Queue(store.Schema)(ctx, pool)
}

// New returns a store on a fresh migrated database. key names the template
// (dbtest.Migrated): one per test package.
func New(t testing.TB, key string) *store.Store {
	t.Helper()
	return &store.Store{Pool: dbtest.Migrated(t, key, Migrate)}
}

// Scan is a scan of org ready to insert: one upload repository, 7 credits.
func Scan(org string) store.Scan {
	return store.Scan{ID: uuid.NewString(), OrgID: org, UserID: uuid.NewString(), TaskID: "scan_test", EstimationID: uuid.NewString(),
		Repos: []store.Repo{{URL: "upload://x", Source: "upload"}}, TargetURLs: []string{}, ContextDocumentIDs: []string{}, Credits: 7}
}

// Insert records sc through the start saga's first step and then puts it
// in status and start state directly, and returns its id.
func Insert(t testing.TB, st *store.Store, sc store.Scan, status vocab.ScanStatus, state store.StartState) string {
	t.Helper()
	ctx := context.Background()
	if err := db.InTx(ctx, st.Pool, func(tx pgx.Tx) error { return st.InsertStarting(ctx, tx, sc) }); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool.Exec(ctx, `UPDATE scan.scans SET status = $2, start_state = $3 WHERE id = $1`, sc.ID, status, state); err != nil {
		t.Fatal(err)
	}
	return sc.ID
}
