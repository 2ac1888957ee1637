package db_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// newDatabase returns the admin URL of a fresh database and the role prefix
// to use on it; the database and the roles are dropped when the test ends.
func newDatabase(t *testing.T) (string, string) {
	t.Helper()
	ctx := context.Background()
	url, drop, err := dbtest.CreateDatabase(ctx, "vsroles")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	prefix := cfg.Database + "_"
	t.Cleanup(func() {
		drop()
		admin := cfg.Copy()
		admin.Database = "postgres"
		c, err := pgx.ConnectConfig(ctx, admin)
		if err != nil {
			return
		}
		defer func() { _ = c.Close(ctx) }()
		for _, r := range append(append([]string{}, db.Services...), "plain") {
			_, _ = c.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{prefix + r}.Sanitize())
		}
	})
	return url, prefix
}

func exec(t *testing.T, url string, stmts ...string) {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close(context.Background()) }()
	for _, s := range stmts {
		if _, err := c.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func pool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestProvisionRolesIsolatesSchemas(t *testing.T) {
	ctx := context.Background()
	admin, prefix := newDatabase(t)
	// A schema migrated before roles existed, as the admin role: a table
	// with a serial column, an enum and a function must all change hands.
	exec(t, admin,
		`CREATE SCHEMA auth`,
		`CREATE TYPE auth.state AS ENUM ('a', 'b')`,
		`CREATE TABLE auth.api_keys (id serial PRIMARY KEY, s auth.state, secret text)`,
		`CREATE FUNCTION auth.one() RETURNS int LANGUAGE sql AS 'SELECT 1'`,
		`INSERT INTO auth.api_keys (s, secret) VALUES ('a', 'hunter2')`)
	dir := t.TempDir()
	urls, err := db.ProvisionRoles(ctx, admin, db.RoleOptions{Prefix: prefix, PasswordDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	again, err := db.ProvisionRoles(ctx, admin, db.RoleOptions{Prefix: prefix, PasswordDir: dir})
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	for _, svc := range db.Services {
		if urls[svc] == "" || urls[svc] != again[svc] {
			t.Fatalf("%s: url %q then %q (passwords must be kept)", svc, urls[svc], again[svc])
		}
		if _, err := os.Stat(filepath.Join(dir, prefix+svc+".password")); err != nil {
			t.Fatal(err)
		}
	}

	// Every service migrates its own schema as its own role, the existing
	// one included.
	for _, svc := range db.Services {
		files := fstest.MapFS{"0001_t.up.sql": {Data: []byte(`CREATE TABLE IF NOT EXISTS things (id int); INSERT INTO things VALUES (1)`)}}
		if svc == "auth" {
			files["0002_alter.up.sql"] = &fstest.MapFile{Data: []byte(`ALTER TABLE api_keys ADD COLUMN note text; ALTER TYPE state ADD VALUE 'c'; CREATE OR REPLACE FUNCTION one() RETURNS int LANGUAGE sql AS 'SELECT 2'`)}
		}
		if err := db.Migrate(ctx, pool(t, urls[svc]), svc, files); err != nil {
			t.Fatalf("migrate %s as its role: %v", svc, err)
		}
	}
	var n int
	if err := pool(t, urls["auth"]).QueryRow(ctx, `INSERT INTO auth.api_keys (s, secret) VALUES ('c', 'x') RETURNING id`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("auth writes its own table: %d %v", n, err)
	}

	scan := pool(t, urls["scan"])
	tests := []struct {
		name, sql string
	}{
		{"read another schema", `SELECT secret FROM auth.api_keys`},
		{"write another schema", `INSERT INTO findings.things VALUES (2)`},
		{"use another schema's sequence", `SELECT nextval('auth.api_keys_id_seq')`},
		{"call another schema's function", `SELECT auth.one()`},
		{"create a schema", `CREATE SCHEMA intruder`},
		{"create in public", `CREATE TABLE public.intruder (id int)`},
		{"create a temporary table", `CREATE TEMP TABLE intruder (id int)`},
		{"take another schema", `ALTER SCHEMA auth OWNER TO CURRENT_USER`},
		{"grant itself another role", `GRANT ` + prefix + `auth TO CURRENT_USER`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scan.Exec(ctx, tc.sql)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
				t.Fatalf("%s: err %v, want permission denied (42501)", tc.sql, err)
			}
		})
	}
}

// TestProvisionRolesGivenPasswords: passwords generated beforehand (by the
// operator, into each service's Secret) are set on the roles and returned in
// the URLs; unsafe or short ones are refused before any role exists.
func TestProvisionRolesGivenPasswords(t *testing.T) {
	ctx := context.Background()
	admin, prefix := newDatabase(t)
	good := "0123456789abcdefABCDEF-._~ghijklmn"
	tests := []struct {
		name, pw, wantErr string
	}{
		// Not hex: the error names the role, whose prefix is random hex.
		{"short", "xyz", "at least 32"},
		{"quote", "abcdefghijklmnopqrstuvwxyz012345'; DROP ROLE x; --", "may hold only"},
		{"url delimiter", "abcdefghijklmnopqrstuvwxyz012345@host", "may hold only"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := db.ProvisionRoles(ctx, admin, db.RoleOptions{Prefix: prefix, Passwords: map[string]string{"auth": tc.pw}})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), tc.pw) {
				t.Fatalf("error reveals the password: %v", err)
			}
			var n int
			if err := pool(t, admin).QueryRow(ctx, `SELECT count(*) FROM pg_roles WHERE rolname LIKE $1`, prefix+"%").Scan(&n); err != nil || n != 0 {
				t.Fatalf("roles created before the check: %d %v", n, err)
			}
		})
	}

	urls, err := db.ProvisionRoles(ctx, admin, db.RoleOptions{Prefix: prefix, Passwords: map[string]string{"auth": good}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := db.WithUser(admin, prefix+"auth", good)
	if err != nil {
		t.Fatal(err)
	}
	if urls["auth"] != want {
		t.Fatalf("auth url %q, want %q", urls["auth"], want)
	}
	// The server stores a verifier for the given password.
	var verifier string
	if err := pool(t, admin).QueryRow(ctx, `SELECT coalesce(rolpassword, '') FROM pg_authid WHERE rolname = $1`, prefix+"auth").Scan(&verifier); err != nil {
		t.Fatal(err)
	}
	if verifier == "" {
		t.Fatal("auth role has no password")
	}
	if _, err := db.ProvisionRoles(ctx, admin, db.RoleOptions{Prefix: prefix, Passwords: map[string]string{"gateway": good}}); err == nil {
		t.Fatal("a password for an unknown service is accepted")
	}
}

func TestProvisionRolesWithoutCreateRoleFallsBack(t *testing.T) {
	ctx := context.Background()
	admin, prefix := newDatabase(t)
	cfg, err := pgx.ParseConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	plain := prefix + "plain"
	exec(t, admin, `CREATE ROLE `+plain+` LOGIN`, `ALTER DATABASE `+cfg.Database+` OWNER TO `+plain)
	url, err := db.WithUser(admin, plain, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.ProvisionRoles(ctx, url, db.RoleOptions{Prefix: prefix})
	if !errors.Is(err, db.ErrCannotProvision) {
		t.Fatalf("err %v, want ErrCannotProvision", err)
	}
}

func TestWithUser(t *testing.T) {
	tests := []struct {
		in, user, password, want string
		wantErr                  bool
	}{
		{"postgres://postgres@127.0.0.1:5432/vulnscan?sslmode=disable", "vulnscan_auth", "", "postgres://vulnscan_auth@127.0.0.1:5432/vulnscan?sslmode=disable", false},
		{"postgres://admin:secret@db:5432/vulnscan?sslmode=require", "vulnscan_scan", "ab12", "postgres://vulnscan_scan:ab12@db:5432/vulnscan?sslmode=require", false},
		{"postgresql://db/vulnscan?user=admin&password=x&sslmode=verify-full", "vulnscan_findings", "cd", "postgresql://vulnscan_findings:cd@db/vulnscan?sslmode=verify-full", false},
		{"host=db user=admin dbname=vulnscan", "vulnscan_auth", "", "", true},
	}
	for _, tc := range tests {
		got, err := db.WithUser(tc.in, tc.user, tc.password)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("WithUser(%q) = %q, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
