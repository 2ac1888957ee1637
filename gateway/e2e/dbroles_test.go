package e2e

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Each service process connects as its own role, and a role reaches its own
// schema only: connected as scan's role (what a compromised scan worker
// holds), another service's tables cannot be read or written, no schema or
// table can be created elsewhere, and scan's own tables stay usable.
func TestServiceRolesReachOnlyTheirOwnSchema(t *testing.T) {
	ctx := context.Background()
	if len(sys.RoleURLs) != 4 {
		t.Fatalf("the system runs without per-service roles: %v", sys.RoleURLs)
	}
	// Traffic through every service, so each has used its pool.
	org, err := sys.NewOrg(10, "auto")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := sys.Do(http.MethodGet, "/findings", org.ReadKey, nil); err != nil || r.Status != http.StatusOK {
		t.Fatalf("list findings: %v %d %s", err, r.Status, r.Body)
	}

	admin, err := pgx.Connect(ctx, sys.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close(ctx) }()
	for _, svc := range []string{"auth", "estimation", "scan", "findings"} {
		cfg, err := pgx.ParseConfig(sys.RoleURLs[svc])
		if err != nil {
			t.Fatal(err)
		}
		// The schema and every table in it belong to the service's role.
		var owner string
		if err := admin.QueryRow(ctx, `SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = $1`, svc).Scan(&owner); err != nil || owner != cfg.User {
			t.Errorf("schema %s owned by %q (%v), want %q", svc, owner, err, cfg.User)
		}
		var foreign []string
		rows, err := admin.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 AND c.relkind IN ('r','S','v') AND c.relowner::regrole::text <> $2`, svc, cfg.User)
		if err == nil {
			foreign, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		if err != nil || len(foreign) > 0 {
			t.Errorf("%s: objects not owned by %s: %v %v", svc, cfg.User, foreign, err)
		}
		// The running process is connected as that role.
		var users []string
		rows, err = admin.Query(ctx, `SELECT DISTINCT usename::text FROM pg_stat_activity WHERE datname = current_database() AND usename IS NOT NULL`)
		if err == nil {
			users, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		if err != nil || !slices.Contains(users, cfg.User) {
			t.Errorf("no connection as %s among %v (%v)", cfg.User, users, err)
		}
	}

	scan, err := pgx.Connect(ctx, sys.RoleURLs["scan"])
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = scan.Close(ctx) }()
	denied := []string{
		`SELECT count(*) FROM auth.api_keys`,
		`SELECT token_enc FROM auth.connected_repos`,
		`UPDATE auth.credit_balances SET balance = balance + 1000`,
		`INSERT INTO findings.audit_log DEFAULT VALUES`,
		`DELETE FROM findings.findings`,
		`SELECT count(*) FROM estimation.uploads`,
		`SELECT count(*) FROM estimation.river_job`,
		`CREATE SCHEMA intruder`,
		`CREATE TABLE public.intruder (id int)`,
		`CREATE TEMP TABLE intruder (id int)`,
		`ALTER SCHEMA auth OWNER TO CURRENT_USER`,
	}
	for _, q := range denied {
		_, err := scan.Exec(ctx, q)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("%s as scan's role: err %v, want permission denied (42501)", q, err)
		}
	}
	for _, q := range []string{`SELECT count(*) FROM scan.scans`, `SELECT count(*) FROM scan.river_job`} {
		if _, err := scan.Exec(ctx, q); err != nil {
			t.Errorf("%s as scan's role: %v", q, err)
		}
	}
}
