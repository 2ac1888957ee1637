package reports

import (
	"database/sql"
	"net/http"
)

type Reports struct{ db *sql.DB }

// List sorts by the column the client asks for, or by date.
func (s *Reports) List(w http.ResponseWriter, r *http.Request) {
	order := "created_at"
	if r.URL.Query().Has("sort") {
		order = r.URL.Query().Get("sort")
	}
	rows, err := s.db.Query("SELECT id, title FROM reports ORDER BY " + order) // vuln: go.sqli.string-query
	if err != nil {
		http.Error(w, "query failed", http.StatusInternalServerError)
		return
	}
	defer rows.Close()
}
