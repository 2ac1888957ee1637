// safe: go.sqli.string-query
package reports

import (
	"database/sql"
	"net/http"
)

type Reports struct{ db *sql.DB }

// List sorts by one of two known columns.
func (s *Reports) List(w http.ResponseWriter, r *http.Request) {
	var order string
	if r.URL.Query().Get("sort") == "title" {
		order = "title"
	} else {
		order = "created_at"
	}
	rows, err := s.db.Query("SELECT id, title FROM reports ORDER BY " + order)
	if err != nil {
		http.Error(w, "query failed", http.StatusInternalServerError)
		return
	}
	defer rows.Close()
}
