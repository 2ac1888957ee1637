// safe: go.debug.pprof go.secrets.hardcoded-credential go.tls.insecure-skip-verify go.jwt.unverified
// safe: go.cors.reflect-origin go.cors.credentials-any-origin go.debug.gin-debug
package server

import (
	"crypto/tls"
	"net/http"
	"os"

	"github.com/gin-gonic/gin"
	"github.com/golang-jwt/jwt/v5"
	"github.com/rs/cors"
)

var dbPassword = os.Getenv("DB_PASSWORD")

var client = &http.Client{Transport: &http.Transport{
	TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12},
}}

func Claims(token string, key []byte) (jwt.MapClaims, error) {
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{"HS256"}))
	return claims, err
}

var allowed = map[string]bool{"https://app.example.com": true}

func CORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); allowed[origin] {
			w.Header().Set("Access-Control-Allow-Origin", origin)
		}
		next.ServeHTTP(w, r)
	})
}

var corsOptions = cors.Options{AllowedOrigins: []string{"https://app.example.com"}, AllowCredentials: true}

func Router() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	return gin.New()
}
