package db

import (
	"context"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Migrate applies the numbered SQL files (NNNN_name.up.sql, in any directory
// of files) to schema, each in its own transaction, recording them in
// <schema>.schema_migrations. A transaction-level advisory lock per schema
// makes concurrent starts of several replicas safe: one applies, the others
// wait and then find nothing to do.
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema string, files fs.FS) error {
	type mig struct {
		version int
		name    string
	}
	var migs []mig
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".up.sql") {
			return err
		}
		base := path.Base(p)
		n, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: name must start with a number", p)
		}
		migs = append(migs, mig{n, p})
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(migs, func(i, j int) bool { return migs[i].version < migs[j].version })
	for i := 1; i < len(migs); i++ {
		// Two files with one number would apply in an arbitrary order and
		// the second would collide in schema_migrations on every start.
		if migs[i].version == migs[i-1].version {
			return fmt.Errorf("migrations %s and %s share the number %d", migs[i-1].name, migs[i].name, migs[i].version)
		}
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte("vulnscan-migrate:" + schema))
	lockID := int64(h.Sum64() >> 1)
	sch := pgx.Identifier{schema}.Sanitize()

	return InTx(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockID); err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		// A service role (see ProvisionRoles) owns its schema but may not
		// create schemas, and PostgreSQL checks that privilege even when the
		// schema exists: create it only when it is missing.
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists); err != nil {
			return fmt.Errorf("look up schema: %w", err)
		}
		if !exists {
			if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+sch); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+sch+".schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		applied := map[int]bool{}
		rows, err := tx.Query(ctx, "SELECT version FROM "+sch+".schema_migrations")
		if err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return err
			}
			applied[v] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+sch+", public"); err != nil {
			return err
		}
		for _, m := range migs {
			if applied[m.version] {
				continue
			}
			body, err := fs.ReadFile(files, m.name)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO "+sch+".schema_migrations (version, name) VALUES ($1, $2)", m.version, path.Base(m.name)); err != nil {
				return fmt.Errorf("record migration %s: %w", m.name, err)
			}
		}
		return nil
	})
}
