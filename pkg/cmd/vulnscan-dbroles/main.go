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
//
// With -from-urls (the Kubernetes provisioning Job) the passwords are not
// generated here: every service's URL, <SERVICE>_DATABASE_URL, is given —
// written beforehand by the operator into the service's Secret — and each
// role is created or altered to that URL's user and password. The user must
// be the service's role (<prefix><service>). Nothing is written to disk,
// only role names are printed (the URLs are the operator's already), and a
// missing privilege is an error rather than a warning, since the services
// would otherwise fail to log in.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/db"
)

// version is stamped at build time (-X main.version=…).
var version = "dev"

func main() {
	env := config.FromOS()
	format := flag.String("format", "env", "output: env (KEY=VALUE lines) or shell (export KEY='VALUE')")
	prefix := flag.String("prefix", db.DefaultRolePrefix, "role name prefix")
	pwDir := flag.String("password-dir", filepath.Join(env.String("VULNSCAN_DATA_DIR", config.DefaultDataDir), "db-roles"), "where role passwords are kept")
	noPassword := flag.Bool("no-password", false, "create roles without a password (trust or certificate authentication)")
	fromURLs := flag.Bool("from-urls", false, "set each role's password from <SERVICE>_DATABASE_URL (all required) and print only role names")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println(version)
		return
	}
	if *format != "env" && *format != "shell" {
		fmt.Fprintln(os.Stderr, "vulnscan-dbroles: -format must be env or shell")
		os.Exit(2)
	}
	if *noPassword {
		*pwDir = ""
	}
	admin := env.String("DATABASE_URL", config.DefaultDatabaseURL)
	if *fromURLs {
		if err := provisionFromURLs(admin, *prefix, func(k string) string { return env.String(k, "") }); err != nil {
			fmt.Fprintln(os.Stderr, "vulnscan-dbroles:", err)
			os.Exit(1)
		}
		return
	}
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

// provisionFromURLs provisions every service's role with the password of its
// given URL and prints the role names.
func provisionFromURLs(admin, prefix string, getenv func(string) string) error {
	passwords, err := passwordsFromURLs(prefix, getenv)
	if err != nil {
		return err
	}
	if _, err := db.ProvisionRoles(context.Background(), admin, db.RoleOptions{Prefix: prefix, Passwords: passwords}); err != nil {
		return err
	}
	for _, svc := range db.Services {
		fmt.Printf("role %s%s: provisioned\n", prefix, svc)
	}
	return nil
}

// passwordsFromURLs reads every service's <SERVICE>_DATABASE_URL and returns
// its password by service. The URL's user must be the service's role, so a
// Secret filled in for the wrong service is caught here rather than as a
// login failure later. Errors name the variable, never its value.
func passwordsFromURLs(prefix string, getenv func(string) string) (map[string]string, error) {
	out := map[string]string{}
	for _, svc := range db.Services {
		name := strings.ToUpper(svc) + "_DATABASE_URL"
		raw := getenv(name)
		if raw == "" {
			return nil, fmt.Errorf("%s is not set: every service's URL is required with -from-urls", name)
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.User == nil {
			return nil, fmt.Errorf("%s is not a postgres://USER:PASSWORD@HOST/DB URL", name)
		}
		if u.User.Username() != prefix+svc {
			return nil, fmt.Errorf("%s: user %q, want the service's role %q", name, u.User.Username(), prefix+svc)
		}
		pw, ok := u.User.Password()
		if !ok || pw == "" {
			return nil, fmt.Errorf("%s has no password", name)
		}
		out[svc] = pw
	}
	return out, nil
}
