package handlers

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

func Greet(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	fmt.Fprintf(w, "<p>Hello %s</p>", name) // vuln: go.xss.response-write
}

func Download(w http.ResponseWriter, r *http.Request) {
	p := filepath.Join("/srv/files", r.URL.Query().Get("file"))
	data, err := os.ReadFile(p) // vuln: go.path.file-access
	if err != nil {
		return
	}
	_, _ = w.Write(data)
}

func Fetch(w http.ResponseWriter, r *http.Request) {
	target := r.URL.Query().Get("url")
	resp, err := http.Get(target) // vuln: go.ssrf.request
	if err != nil {
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(w, resp.Body)
}

func Login(w http.ResponseWriter, r *http.Request) {
	next := r.FormValue("next")
	http.Redirect(w, r, next, http.StatusFound) // vuln: go.redirect.open
}
