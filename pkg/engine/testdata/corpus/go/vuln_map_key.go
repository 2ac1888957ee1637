package search

import (
	"database/sql"
	"net/http"
)

func Search(db *sql.DB, r *http.Request) error {
	filters := map[string]string{}
	filters["status"] = "open"
	filters["owner"] = r.URL.Query().Get("owner")
	_, err := db.Exec("DELETE FROM drafts WHERE owner = '" + filters["owner"] + "'") // vuln: go.sqli.string-query
	return err
}
