package session

import (
	"math/rand"
	"net/http"
	"strconv"
	"time"
)

func Start(w http.ResponseWriter, r *http.Request) {
	id := strconv.FormatInt(rand.Int63(), 36)
	http.SetCookie(w, &http.Cookie{Name: "sid", Value: id, Secure: true, HttpOnly: true, Expires: time.Now().Add(time.Hour)}) // vuln: go.weakrand.token
}
