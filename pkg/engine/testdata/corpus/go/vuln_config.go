package server

import (
	"crypto/tls"
	"net/http"
	_ "net/http/pprof" // vuln: go.debug.pprof

	"github.com/gin-gonic/gin"
	"github.com/golang-jwt/jwt/v5"
	"github.com/rs/cors"
)

const dbPassword = "Sup3rS3cretPassw0rd" // vuln: go.secrets.hardcoded-credential

var client = &http.Client{Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // vuln: go.tls.insecure-skip-verify
}}

func Claims(token string) (jwt.MapClaims, error) {
	claims := jwt.MapClaims{}
	_, _, err := jwt.NewParser().ParseUnverified(token, claims) // vuln: go.jwt.unverified
	return claims, err
}

func CORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", r.Header.Get("Origin")) // vuln: go.cors.reflect-origin
		next.ServeHTTP(w, r)
	})
}

var corsOptions = cors.Options{AllowedOrigins: []string{"*"}, AllowCredentials: true} // vuln: go.cors.credentials-any-origin

func Router() *gin.Engine {
	gin.SetMode(gin.DebugMode) // vuln: go.debug.gin-debug
	return gin.New()
}
