// safe: go.sqli.string-query
package orders

import (
	"database/sql"
	"net/http"
)

// table maps a report kind to its table, and refuses anything else.
func table(kind string) string {
	switch kind {
	case "daily":
		return "daily_totals"
	case "monthly":
		return "monthly_totals"
	}
	panic("unknown report kind")
}

func Totals(db *sql.DB, w http.ResponseWriter, r *http.Request) {
	defer func() {
		if recover() != nil {
			http.Error(w, "bad kind", http.StatusBadRequest)
		}
	}()
	rows, err := db.Query("SELECT day, total FROM " + table(r.URL.Query().Get("kind")))
	if err == nil {
		rows.Close()
	}
}
