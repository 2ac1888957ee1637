// safe: go.sqli.string-query
package search

import (
	"database/sql"
	"net/http"
)

func Search(db *sql.DB, r *http.Request) error {
	filters := map[string]string{}
	filters["status"] = "open"
	filters["owner"] = r.URL.Query().Get("owner")
	_, err := db.Exec("DELETE FROM drafts WHERE status = '"+filters["status"]+"' AND owner = $1", filters["owner"])
	return err
}
