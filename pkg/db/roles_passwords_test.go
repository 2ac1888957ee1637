package db_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/db"
)

func TestProvisionRolesPasswordDir(t *testing.T) {
	ctx := context.Background()
	admin, prefix := newDatabase(t)
	dir := filepath.Join(t.TempDir(), "secrets")
	opts := db.RoleOptions{Prefix: prefix, PasswordDir: dir, Services: []string{"scan"}}

	urls, err := db.ProvisionRoles(ctx, admin, opts)
	require.NoError(t, err)
	require.Len(t, urls, 1, "only the listed service is provisioned")

	file := filepath.Join(dir, prefix+"scan.password")
	st, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	pw := string(b[:len(b)-1])
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{48}$`), pw)
	want, err := db.WithUser(admin, prefix+"scan", pw)
	require.NoError(t, err)
	require.Equal(t, want, urls["scan"])

	// A second run reuses the stored password.
	again, err := db.ProvisionRoles(ctx, admin, opts)
	require.NoError(t, err)
	require.Equal(t, urls, again)

	// The service role migrates its own schema.
	scan := pool(t, urls["scan"])
	require.NoError(t, db.Migrate(ctx, scan, "scan", fstest.MapFS{
		"0001_t.up.sql": {Data: []byte("CREATE TABLE jobs (id int PRIMARY KEY)")},
	}))
	require.Equal(t, 0, countRows(t, scan, "SELECT count(*) FROM scan.jobs"))
	// and no other.
	require.Error(t, db.Migrate(ctx, scan, "findings", fstest.MapFS{
		"0001_t.up.sql": {Data: []byte("CREATE TABLE x (id int)")},
	}))

	for _, tc := range []struct {
		name    string
		opts    db.RoleOptions
		prepare func()
		wantErr string
	}{
		{name: "unknown service", opts: db.RoleOptions{Prefix: prefix, Services: []string{"gateway"}},
			wantErr: `unknown service "gateway"`},
		{name: "foreign password file", opts: db.RoleOptions{Prefix: prefix, PasswordDir: dir, Services: []string{"auth"}},
			prepare: func() {
				require.NoError(t, os.WriteFile(filepath.Join(dir, prefix+"auth.password"), []byte("hunter2\n"), 0o600))
			},
			wantErr: "not a password this program wrote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.prepare != nil {
				tc.prepare()
			}
			_, err := db.ProvisionRoles(ctx, admin, tc.opts)
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}
