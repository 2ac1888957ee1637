package prefs

import "net/http"

func SaveTheme(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: "theme", Value: "dark", HttpOnly: true}) // vuln: go.cookie.insecure
}
