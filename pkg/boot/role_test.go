package boot

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// The shared administrator role is reported as a warning; a service's own
// role is not.
func TestCheckRole(t *testing.T) {
	ctx := context.Background()
	admin, drop, err := dbtest.CreateDatabase(ctx, "vsrole")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	prefix := cfg.Database + "_"
	t.Cleanup(func() {
		drop()
		c, err := pgx.Connect(ctx, dbtest.ServerURL())
		if err != nil {
			return
		}
		defer func() { _ = c.Close(ctx) }()
		for _, s := range db.Services {
			_, _ = c.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{prefix + s}.Sanitize())
		}
	})
	urls, err := db.ProvisionRoles(ctx, admin, db.RoleOptions{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, url, level, role string
	}{
		{"administrator", admin, "WARN", cfg.User},
		{"own role", urls["scan"], "INFO", prefix + "scan"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pool, err := pgxpool.New(ctx, tc.url)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			var buf bytes.Buffer
			if err := CheckRole(ctx, slog.New(slog.NewTextHandler(&buf, nil)), "scan", pool); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if !strings.Contains(out, "level="+tc.level) || !strings.Contains(out, "db_role="+tc.role) {
				t.Fatalf("logged %q, want level %s and role %s", out, tc.level, tc.role)
			}
		})
	}
}
