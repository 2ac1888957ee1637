package db

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
// Such a file may name, on its next line, the extensions its statements
// use:
//
//	-- migrate: with extensions pg_trgm, btree_gin
//
// Before it runs, those missing are created in the public schema when the
// role may (ProvisionRoles creates them for the service roles, which may
// not). When one is still missing, the file is skipped without being
// recorded and the files after it apply: it runs at a later start, once
// the extensions exist (a service may start before the provisioning that
// creates them has run, as on an upgrade). Such a file must therefore hold
// only what nothing after it depends on, such as indexes. Its statements
// find the extensions' objects by the search path.
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
// transaction, and withExtensions starts the line after it that names the
// extensions it needs (see Migrate).
const (
	withoutTx      = "-- migrate: without transaction"
	withExtensions = "-- migrate: with extensions "
)

// migration is one numbered file.
type migration struct {
	version int
	name    string // its path in the files
	body    string
	notx    bool     // runs outside a transaction
	needs   []string // the extensions it needs (notx only)
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
		m := migration{version: n, name: p, body: string(body)}
		first, rest, _ := strings.Cut(m.body, "\n")
		second, _, _ := strings.Cut(rest, "\n")
		m.notx = strings.TrimSpace(first) == withoutTx
		if !m.notx && (strings.HasPrefix(strings.TrimSpace(first), withExtensions) || strings.HasPrefix(strings.TrimSpace(second), withExtensions)) {
			return fmt.Errorf("migration %s: extensions are named only by a migration without transaction", p)
		}
		if list, ok := strings.CutPrefix(strings.TrimSpace(second), withExtensions); ok {
			for _, ext := range strings.Split(list, ",") {
				if ext = strings.TrimSpace(ext); ext != "" {
					m.needs = append(m.needs, ext)
				}
			}
		}
		migs = append(migs, m)
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
	path, ok, err := extensionsPath(ctx, conn, m)
	if err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	if !ok {
		return nil // not recorded: tried again at the next start
	}
	if _, err := conn.Exec(ctx, "SET search_path TO "+sch+", public"+path); err != nil {
		return err
	}
	for _, stmt := range statements(m.body) {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return record(ctx, conn, sch, m)
}

// extensionsPath creates the extensions m needs that are missing, when the
// role may, and returns whether all of them exist, with the schemas that
// hold them outside public as a search path suffix (", a, b").
func extensionsPath(ctx context.Context, conn *pgx.Conn, m migration) (string, bool, error) {
	if len(m.needs) == 0 {
		return "", true, nil
	}
	var path strings.Builder
	for _, ext := range m.needs {
		const lookup = `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = $1`
		var ns string
		err := conn.QueryRow(ctx, lookup, ext).Scan(&ns)
		if errors.Is(err, pgx.ErrNoRows) {
			// Outside a transaction, a refusal leaves the session usable;
			// another database session may have created it meanwhile.
			_, cerr := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+pgx.Identifier{ext}.Sanitize()+" WITH SCHEMA public")
			switch {
			case cerr != nil && missingExtension(cerr):
				return "", false, nil
			case cerr != nil && !isDuplicate(cerr):
				return "", false, fmt.Errorf("create extension %s: %w", ext, cerr)
			}
			err = conn.QueryRow(ctx, lookup, ext).Scan(&ns)
		}
		if err != nil {
			return "", false, fmt.Errorf("look up extension %s: %w", ext, err)
		}
		if ns != "public" {
			path.WriteString(", " + pgx.Identifier{ns}.Sanitize())
		}
	}
	return path.String(), true, nil
}

// missingExtension reports whether CREATE EXTENSION failed because the
// role may not create it or the server does not have it.
func missingExtension(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code {
	case "42501", // insufficient_privilege
		"58P01", // undefined_file: the server lacks the extension's files
		"0A000": // feature_not_supported
		return true
	}
	return false
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
