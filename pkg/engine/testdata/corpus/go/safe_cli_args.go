// safe: go.cmdi.exec go.sqli.string-query
package main

import (
	"database/sql"
	"os"
	"os/exec"
)

func main() {
	db, err := sql.Open("postgres", os.Getenv("DATABASE_URL"))
	if err != nil {
		os.Exit(1)
	}
	// The schema name comes from the operator's environment, not a request.
	_, _ = db.Exec("SET search_path TO " + os.Getenv("APP_SCHEMA"))
	if len(os.Args) > 1 {
		_ = exec.Command("tar", "czf", "/backups/latest.tgz", "--", os.Args[1]).Run()
	}
}
