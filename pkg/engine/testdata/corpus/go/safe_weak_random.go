// safe: go.weakrand.token go.cookie.insecure
package session

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"time"
)

func Start(w http.ResponseWriter, r *http.Request) {
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	id := hex.EncodeToString(buf)
	http.SetCookie(w, &http.Cookie{Name: "sid", Value: id, Secure: true, HttpOnly: true, Expires: time.Now().Add(time.Hour)})
}
