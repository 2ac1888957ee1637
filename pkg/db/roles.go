package db

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Services are the processes that own a schema; each schema is named after
// its service.
var Services = []string{"auth", "estimation", "scan", "findings"}

// DefaultRolePrefix names the per-service roles: vulnscan_auth, ….
const DefaultRolePrefix = "vulnscan_"

// ErrCannotProvision is returned (wrapped) when the admin role lacks the
// privileges to create roles or hand schemas over; callers fall back to the
// admin URL for every service.
var ErrCannotProvision = errors.New("the database role cannot create per-service roles")

// RoleOptions say how ProvisionRoles names roles and where it keeps their
// passwords.
type RoleOptions struct {
	// Prefix is prepended to the service name (DefaultRolePrefix when empty).
	Prefix string
	// PasswordDir holds one file per role (<role>.password, mode 0600); a
	// missing file gets a fresh random password. Empty: the roles get no
	// password (trust or certificate authentication).
	PasswordDir string
	// Services to provision (all of Services when empty). A service given
	// its own URL by the operator is left out, so that its role keeps the
	// schema.
	Services []string
}

// ProvisionRoles gives every service its own LOGIN role on the database
// adminURL names, connecting as adminURL's role (a superuser or a role with
// CREATEROLE that owns the database's objects). For each service it:
//
//   - creates the role <prefix><service> (LOGIN, no other attribute) or
//     resets the password of an existing one;
//   - creates the service's schema owned by that role, or hands an existing
//     schema and every table, sequence, view, type and function in it over
//     to the role (so its migrations, River's included, keep working);
//   - revokes every privilege of PUBLIC on the schema.
//
// On the database it revokes CONNECT, TEMPORARY and CREATE from PUBLIC and
// CREATE on the public schema from PUBLIC, and grants CONNECT to each
// service role only. A service role therefore reaches its own schema and
// nothing else: no other service's schema, no new schema, no objects in
// public. It returns each service's URL: adminURL with the role (and its
// password) in place of the admin user. It is idempotent; a privilege error
// is reported as ErrCannotProvision.
func ProvisionRoles(ctx context.Context, adminURL string, opts RoleOptions) (map[string]string, error) {
	if opts.Prefix == "" {
		opts.Prefix = DefaultRolePrefix
	}
	if opts.Services == nil {
		opts.Services = Services
	}
	pool, err := Open(ctx, adminURL, 60*time.Second)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("provision roles: %w", err)
	}
	defer conn.Release()
	c := conn.Conn()

	var super, createRole bool
	var dbName string
	if err := c.QueryRow(ctx, `SELECT rolsuper, rolcreaterole, current_database() FROM pg_roles WHERE rolname = current_user`).
		Scan(&super, &createRole, &dbName); err != nil {
		return nil, fmt.Errorf("provision roles: read own privileges: %w", err)
	}
	if !super && !createRole {
		return nil, fmt.Errorf("%w: %s is neither superuser nor CREATEROLE", ErrCannotProvision, c.Config().User)
	}

	urls := map[string]string{}
	// One advisory lock serializes provisioning runs against one database.
	if _, err := c.Exec(ctx, `SELECT pg_advisory_lock(hashtext('vulnscan-provision-roles'))`); err != nil {
		return nil, fmt.Errorf("provision roles: lock: %w", err)
	}
	defer func() {
		_, _ = c.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext('vulnscan-provision-roles'))`)
	}()
	db := pgx.Identifier{dbName}.Sanitize()
	for _, stmt := range []string{
		"REVOKE ALL ON DATABASE " + db + " FROM PUBLIC",
		"REVOKE CREATE ON SCHEMA public FROM PUBLIC",
	} {
		if _, err := c.Exec(ctx, stmt); err != nil {
			return nil, privilege(fmt.Errorf("provision roles: %s: %w", stmt, err))
		}
	}
	for _, svc := range opts.Services {
		if !known(svc) {
			return nil, fmt.Errorf("provision roles: unknown service %q", svc)
		}
		role := opts.Prefix + svc
		password, err := rolePassword(opts.PasswordDir, role)
		if err != nil {
			return nil, err
		}
		if err := provisionOne(ctx, c, db, svc, role, password, super); err != nil {
			return nil, privilege(fmt.Errorf("provision role %s: %w", role, err))
		}
		u, err := WithUser(adminURL, role, password)
		if err != nil {
			return nil, err
		}
		urls[svc] = u
	}
	return urls, nil
}

func provisionOne(ctx context.Context, c *pgx.Conn, db, schema, role, password string, super bool) error {
	r := pgx.Identifier{role}.Sanitize()
	s := pgx.Identifier{schema}.Sanitize()
	var exists bool
	if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, role).Scan(&exists); err != nil {
		return err
	}
	pw := " PASSWORD NULL"
	if password != "" {
		// Passwords are hex, so quoting them as a literal is safe; CREATE
		// ROLE takes no parameters.
		pw = " PASSWORD '" + password + "'"
	}
	if !exists {
		if _, err := c.Exec(ctx, "CREATE ROLE "+r+" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS"+pw); err != nil && !isDuplicate(err) {
			return err
		}
	} else if _, err := c.Exec(ctx, "ALTER ROLE "+r+" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS"+pw); err != nil {
		return err
	}
	if !super {
		// A CREATEROLE admin may hand objects to the role only as a member of it.
		if _, err := c.Exec(ctx, "GRANT "+r+" TO CURRENT_USER"); err != nil {
			return err
		}
	}
	return InTx(ctx, c, func(tx pgx.Tx) error {
		var have bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&have); err != nil {
			return err
		}
		stmts := []string{"GRANT CONNECT ON DATABASE " + db + " TO " + r}
		if have {
			stmts = append(stmts, "ALTER SCHEMA "+s+" OWNER TO "+r)
		} else {
			stmts = append(stmts, "CREATE SCHEMA "+s+" AUTHORIZATION "+r)
		}
		stmts = append(stmts, "REVOKE ALL ON SCHEMA "+s+" FROM PUBLIC")
		// Objects created by the admin role before the service had a role
		// of its own (earlier versions ran migrations as DATABASE_URL's role).
		rows, err := tx.Query(ctx, `
SELECT 'ALTER TABLE ' || quote_ident(n.nspname) || '.' || quote_ident(c.relname) || ' OWNER TO ' || $2
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') AND c.relowner <> (SELECT oid FROM pg_roles WHERE rolname = $3)
   AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')))
UNION ALL
SELECT 'ALTER TYPE ' || quote_ident(n.nspname) || '.' || quote_ident(t.typname) || ' OWNER TO ' || $2
  FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
 WHERE n.nspname = $1 AND t.typtype IN ('e', 'd', 'r') AND t.typowner <> (SELECT oid FROM pg_roles WHERE rolname = $3)
UNION ALL
SELECT 'ALTER ROUTINE ' || p.oid::regprocedure::text || ' OWNER TO ' || $2
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = $1 AND p.proowner <> (SELECT oid FROM pg_roles WHERE rolname = $3)`, schema, r, role)
		if err != nil {
			return err
		}
		owned, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, stmt := range append(stmts, owned...) {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
		return nil
	})
}

// rolePassword reads role's password from dir, creating a random one on
// first use; "" when dir is empty.
func rolePassword(dir, role string) (string, error) {
	if dir == "" {
		return "", nil
	}
	path := filepath.Join(dir, role+".password")
	if b, err := os.ReadFile(path); err == nil {
		pw := strings.TrimSpace(string(b))
		if _, err := hex.DecodeString(pw); err != nil || len(pw) < 32 {
			return "", fmt.Errorf("%s: not a password this program wrote (hex, at least 32 characters)", path)
		}
		return pw, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	pw := hex.EncodeToString(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return rolePassword(dir, role) // another run wrote it first
	}
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(pw + "\n"); err != nil {
		_ = f.Close()
		return "", err
	}
	return pw, f.Close()
}

// WithUser returns databaseURL with its user (and password) replaced; an
// empty password removes the password. Only URL-form connection strings
// (postgres://…) are supported.
func WithUser(databaseURL, user, password string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("database url: per-service roles need a postgres:// URL")
	}
	if password == "" {
		u.User = url.User(user)
	} else {
		u.User = url.UserPassword(user, password)
	}
	q := u.Query()
	q.Del("user")
	q.Del("password")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func privilege(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
		return fmt.Errorf("%w: %w", ErrCannotProvision, err)
	}
	return err
}

func isDuplicate(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "42710" || pgErr.Code == "23505")
}

func known(svc string) bool {
	for _, s := range Services {
		if s == svc {
			return true
		}
	}
	return false
}
