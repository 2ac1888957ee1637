// safe: go.sqli.string-query
package accounts

import (
	"database/sql"
	"net/http"
)

type Repo struct {
	db *sql.DB
}

func (r *Repo) ByEmail(email string) *sql.Row {
	return r.db.QueryRow("SELECT id FROM accounts WHERE email = $1", email)
}

func Lookup(repo *Repo) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		var id int
		_ = repo.ByEmail(req.PostFormValue("email")).Scan(&id)
	}
}
