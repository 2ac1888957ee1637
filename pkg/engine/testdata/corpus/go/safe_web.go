// safe: go.xss.response-write go.path.file-access go.ssrf.request go.redirect.open
package handlers

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
)

func Greet(w http.ResponseWriter, r *http.Request) {
	name := html.EscapeString(r.URL.Query().Get("name"))
	fmt.Fprintf(w, "<p>Hello %s</p>", name)
}

func Download(w http.ResponseWriter, r *http.Request) {
	p := filepath.Join("/srv/files", filepath.Base(r.URL.Query().Get("file")))
	data, err := os.ReadFile(p)
	if err != nil {
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write([]byte(fmt.Sprint(len(data))))
}

func Fetch(w http.ResponseWriter, r *http.Request) {
	resp, err := http.Get("https://api.example.com/search?q=" + url.QueryEscape(r.URL.Query().Get("q")))
	if err != nil {
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
}

func Login(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/dashboard", http.StatusFound)
}
