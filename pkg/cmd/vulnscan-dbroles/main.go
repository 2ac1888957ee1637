// Command vulnscan-dbroles gives every service its own PostgreSQL role with
// privileges on its own schema only (db.ProvisionRoles), connecting with
// DATABASE_URL as an administrator, and prints each service's database URL
// for the services whose <SERVICE>_DATABASE_URL is unset (a service given
// its own URL is left alone):
//
//	AUTH_DATABASE_URL=postgres://vulnscan_auth:…@host:5432/vulnscan?sslmode=disable
//
// (-format shell quotes and exports them for `eval`, as `make run` does).
// Passwords are random, kept one file per role (<role>.password, mode 0600)
// under -password-dir (default $VULNSCAN_DATA_DIR/db-roles) and reused on the
// next run. When DATABASE_URL's role may not create roles it warns on stderr,
// prints nothing and exits 0: the services then connect with DATABASE_URL as
// before.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/db"
)

func main() {
	env := config.FromOS()
	format := flag.String("format", "env", "output: env (KEY=VALUE lines) or shell (export KEY='VALUE')")
	prefix := flag.String("prefix", db.DefaultRolePrefix, "role name prefix")
	pwDir := flag.String("password-dir", filepath.Join(env.String("VULNSCAN_DATA_DIR", config.DefaultDataDir), "db-roles"), "where role passwords are kept")
	noPassword := flag.Bool("no-password", false, "create roles without a password (trust or certificate authentication)")
	flag.Parse()
	if *format != "env" && *format != "shell" {
		fmt.Fprintln(os.Stderr, "vulnscan-dbroles: -format must be env or shell")
		os.Exit(2)
	}
	if *noPassword {
		*pwDir = ""
	}
	admin := env.String("DATABASE_URL", config.DefaultDatabaseURL)
	// A service given its own URL keeps it, and its schema keeps its owner.
	var services []string
	for _, svc := range db.Services {
		if env.String(strings.ToUpper(svc)+"_DATABASE_URL", "") == "" {
			services = append(services, svc)
		}
	}
	if len(services) == 0 {
		return
	}
	urls, err := db.ProvisionRoles(context.Background(), admin, db.RoleOptions{Prefix: *prefix, PasswordDir: *pwDir, Services: services})
	if errors.Is(err, db.ErrCannotProvision) {
		fmt.Fprintln(os.Stderr, "vulnscan-dbroles: WARNING: every service will connect with DATABASE_URL's role (no per-service roles):", err)
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulnscan-dbroles:", err)
		os.Exit(1)
	}
	for _, svc := range services {
		name := strings.ToUpper(svc) + "_DATABASE_URL"
		if *format == "shell" {
			// URLs from url.URL.String never contain a single quote.
			fmt.Printf("export %s='%s'\n", name, urls[svc])
		} else {
			fmt.Printf("%s=%s\n", name, urls[svc])
		}
	}
}
