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
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Migrate applies the numbered SQL files (NNNN_name.up.sql, in any directory
// of files) to schema in order, recording them in <schema>.schema_migrations.
// Consecutive pending files apply in one transaction, so a failing one
// leaves none of them applied. A file whose first line is
//
//	-- migrate: without transaction
//
// applies outside any transaction, one statement at a time (statements end
// with a semicolon at the end of a line): the way to build an index on a
// large table with CREATE INDEX CONCURRENTLY, which does not block writes
// while it builds. Such a file must be safe to run again after a failure
// part way (IF NOT EXISTS): before it runs, indexes of the schema that a
// failed concurrent build left invalid are dropped, so that it builds them
// anew rather than skipping them.
//
// A session-level advisory lock per schema, taken by polling so that a
// waiting replica holds no snapshot a concurrent index build would wait
// for, makes concurrent starts of several replicas safe: one applies, the
// others wait and then find nothing to do.
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema string, files fs.FS) error {
	migs, err := readMigrations(files)
	if err != nil {
		return err
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte("vulnscan-migrate:" + schema))
	lockID := int64(h.Sum64() >> 1)
	sch := pgx.Identifier{schema}.Sanitize()

	pc, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migration connection: %w", err)
	}
	// The connection's session holds the lock and, for statements outside
	// a transaction, the search path: it is closed rather than reused.
	conn := pc.Hijack()
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if err := advisoryLock(ctx, conn, lockID); err != nil {
		return err
	}

	var pending []migration
	for first := true; first || len(pending) > 0; first = false {
		// A transaction applies the pending files up to the next one that
		// runs without a transaction; the first also creates the schema
		// and its record and reads what is applied.
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if first {
				applied, err := prepareSchema(ctx, tx, schema, sch)
				if err != nil {
					return err
				}
				pending = unapplied(migs, applied)
			}
			if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+sch+", public"); err != nil {
				return err
			}
			for len(pending) > 0 && !pending[0].notx {
				m := pending[0]
				if _, err := tx.Exec(ctx, m.body); err != nil {
					return fmt.Errorf("migration %s: %w", m.name, err)
				}
				if err := record(ctx, tx, sch, m); err != nil {
					return err
				}
				pending = pending[1:]
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(pending) > 0 {
			if err := applyWithoutTx(ctx, conn, schema, sch, pending[0]); err != nil {
				return err
			}
			pending = pending[1:]
		}
	}
	return nil
}

// withoutTx is the first line of a migration that runs outside a
// transaction (see Migrate).
const withoutTx = "-- migrate: without transaction"

// migration is one numbered file.
type migration struct {
	version int
	name    string // its path in the files
	body    string
	notx    bool // runs outside a transaction
}

// readMigrations reads the numbered files in version order, refusing
// unnumbered ones and two with one number.
func readMigrations(files fs.FS) ([]migration, error) {
	var migs []migration
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".up.sql") {
			return err
		}
		base := path.Base(p)
		n, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: name must start with a number", p)
		}
		body, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		first, _, _ := strings.Cut(string(body), "\n")
		migs = append(migs, migration{version: n, name: p, body: string(body), notx: strings.TrimSpace(first) == withoutTx})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(migs, func(i, j int) bool { return migs[i].version < migs[j].version })
	for i := 1; i < len(migs); i++ {
		// Two files with one number would apply in an arbitrary order and
		// the second would collide in schema_migrations on every start.
		if migs[i].version == migs[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s share the number %d", migs[i-1].name, migs[i].name, migs[i].version)
		}
	}
	return migs, nil
}

// advisoryLock takes the session-level advisory lock id on conn, polling:
// a backend waiting in pg_advisory_lock holds a snapshot, which a
// concurrent index build run by the lock's holder would wait for in turn.
func advisoryLock(ctx context.Context, conn *pgx.Conn, id int64) error {
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
		var got bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", id).Scan(&got); err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		if got {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("migration lock: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
}

// prepareSchema creates the schema and its schema_migrations when missing
// and returns the versions recorded there.
func prepareSchema(ctx context.Context, tx pgx.Tx, schema, sch string) (applied map[int]bool, err error) {
	// A service role (see ProvisionRoles) owns its schema but may not
	// create schemas, and PostgreSQL checks that privilege even when the
	// schema exists: create it only when it is missing.
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists); err != nil {
		return nil, fmt.Errorf("look up schema: %w", err)
	}
	if !exists {
		if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+sch); err != nil {
			return nil, fmt.Errorf("create schema: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+sch+".schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", err)
	}
	rows, err := tx.Query(ctx, "SELECT version FROM "+sch+".schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	applied = make(map[int]bool, len(versions))
	for _, v := range versions {
		applied[v] = true
	}
	return applied, nil
}

// unapplied returns the migrations whose versions applied does not hold.
func unapplied(migs []migration, applied map[int]bool) []migration {
	var out []migration
	for _, m := range migs {
		if !applied[m.version] {
			out = append(out, m)
		}
	}
	return out
}

// record notes m as applied.
func record(ctx context.Context, q DBTX, sch string, m migration) error {
	if _, err := q.Exec(ctx, "INSERT INTO "+sch+".schema_migrations (version, name) VALUES ($1, $2)", m.version, path.Base(m.name)); err != nil {
		return fmt.Errorf("record migration %s: %w", m.name, err)
	}
	return nil
}

// applyWithoutTx runs m's statements one at a time outside a transaction
// on conn, after dropping the schema's invalid indexes (left by a
// concurrent build that failed), and records it.
func applyWithoutTx(ctx context.Context, conn *pgx.Conn, schema, sch string, m migration) error {
	rows, err := conn.Query(ctx, `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_index i
		JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND NOT i.indisvalid`, schema)
	if err != nil {
		return fmt.Errorf("migration %s: invalid indexes: %w", m.name, err)
	}
	invalid, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("migration %s: invalid indexes: %w", m.name, err)
	}
	for _, ix := range invalid {
		if _, err := conn.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+ix); err != nil {
			return fmt.Errorf("migration %s: drop invalid index %s: %w", m.name, ix, err)
		}
	}
	if _, err := conn.Exec(ctx, "SET search_path TO "+sch+", public"); err != nil {
		return err
	}
	for _, stmt := range statements(m.body) {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return record(ctx, conn, sch, m)
}

// statements splits a migration that runs without a transaction into its
// statements: each ends with a semicolon at the end of a line. Comment
// lines and blank ones between statements are dropped.
func statements(body string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(line)
		if cur.Len() == 0 && (t == "" || strings.HasPrefix(t, "--")) {
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		if strings.HasSuffix(t, ";") {
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		out = append(out, strings.TrimSpace(cur.String()))
	}
	return out
}
