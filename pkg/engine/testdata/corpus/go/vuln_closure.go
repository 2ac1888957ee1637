package hooks

import (
	"net/http"
)

func Callback(w http.ResponseWriter, r *http.Request) {
	next := r.URL.Query().Get("next")
	finish := func(code int) {
		http.Redirect(w, r, next, code) // vuln: go.redirect.open
	}
	finish(http.StatusSeeOther)
}
