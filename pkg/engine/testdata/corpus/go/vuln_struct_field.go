package catalog

import (
	"database/sql"
	"fmt"
	"net/http"
)

type query struct {
	Category string
	Limit    int
}

func Products(db *sql.DB, w http.ResponseWriter, r *http.Request) {
	q := query{Category: r.FormValue("category"), Limit: 20}
	stmt := fmt.Sprintf("SELECT name FROM products WHERE category = '%s' LIMIT %d", q.Category, q.Limit)
	rows, err := db.Query(stmt) // vuln: go.sqli.string-query
	if err == nil {
		rows.Close()
	}
}
