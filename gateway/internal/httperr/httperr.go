// Package httperr renders the public API's error body
// {statusCode, message, error} for the gateway and for service errors.
package httperr

import (
	"encoding/json"
	"net/http"
)

// Body is the spec's error body.
type Body struct {
	StatusCode int    `json:"statusCode"`
	Message    any    `json:"message"`
	Error      string `json:"error"`
}

// Write sends status with message as the spec's error body.
func Write(w http.ResponseWriter, status int, message string) {
	writeBody(w, status, message)
}

func writeBody(w http.ResponseWriter, status int, message any) {
	text := http.StatusText(status)
	if text == "" {
		text = "Error"
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(Body{StatusCode: status, Message: message, Error: text})
}
