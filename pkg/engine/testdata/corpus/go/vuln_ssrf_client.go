package proxy

import (
	"io"
	"net/http"
	"time"
)

var client = &http.Client{Timeout: 5 * time.Second}

func Preview(w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequest(http.MethodGet, r.URL.Query().Get("url"), nil) // vuln: go.ssrf.request
	if err != nil {
		return
	}
	resp, err := client.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
}
