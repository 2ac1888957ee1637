// safe: go.sqli.string-query
package audit

import (
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

type filter struct {
	Actor string `json:"actor"`
}

func Query(db *sql.DB, w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var f filter
	if err := json.Unmarshal(body, &f); err != nil {
		return
	}
	var sb strings.Builder
	sb.WriteString("SELECT actor, action FROM audit_log")
	sb.WriteString(" WHERE actor = $1")
	rows, err := db.Query(sb.String(), f.Actor)
	if err == nil {
		rows.Close()
	}
}
