package profile

import "net/http"

// Echo answers with the submitted nickname, building the JSON by hand.
func Echo(w http.ResponseWriter, r *http.Request) {
	nick := r.PostFormValue("nick")
	_, _ = w.Write([]byte(`{"nick":"` + nick + `"}`)) // vuln: go.xss.response-write
}
