// safe: go.xss.response-write
package profile

import (
	"encoding/json"
	"net/http"
)

type reply struct {
	Nick string `json:"nick"`
}

// Echo answers with the submitted nickname as JSON.
func Echo(w http.ResponseWriter, r *http.Request) {
	body, err := json.Marshal(reply{Nick: r.PostFormValue("nick")})
	if err != nil {
		http.Error(w, "encoding failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
