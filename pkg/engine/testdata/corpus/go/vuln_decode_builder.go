package audit

import (
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

type filter struct {
	Actor  string   `json:"actor"`
	Fields []string `json:"fields"`
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
	sb.WriteString("SELECT ")
	sb.WriteString(strings.Join(f.Fields, ", "))
	sb.WriteString(" FROM audit_log")
	rows, err := db.Query(sb.String()) // vuln: go.sqli.string-query
	if err == nil {
		rows.Close()
	}
}
