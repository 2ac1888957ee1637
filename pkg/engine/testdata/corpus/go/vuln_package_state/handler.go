package shop

import "net/http"

func Handle(w http.ResponseWriter, r *http.Request) {
	_ = store.Find(r.FormValue("name"))
	_, _ = DB.Exec("UPDATE carts SET seen = true WHERE name = '" + r.FormValue("n") + "'") // vuln: go.sqli.string-query
}

func Remove(w http.ResponseWriter, r *http.Request) {
	store.Remove(r.FormValue("id"))
}
