// safe: go.sqli.string-query
package shop

import "net/http"

func Handle(w http.ResponseWriter, r *http.Request) {
	_ = store.Find(r.FormValue("name"))
	_, _ = DB.Exec("UPDATE carts SET seen = true WHERE name = $1", r.FormValue("n"))
}

func Remove(w http.ResponseWriter, r *http.Request) {
	store.Remove(r.FormValue("id"))
}
