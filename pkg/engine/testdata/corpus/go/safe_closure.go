// safe: go.redirect.open
package hooks

import (
	"net/http"
	"net/url"
)

func Callback(w http.ResponseWriter, r *http.Request) {
	next := "/home?from=" + url.QueryEscape(r.URL.Query().Get("next"))
	finish := func(code int) {
		http.Redirect(w, r, next, code)
	}
	finish(http.StatusSeeOther)
}
