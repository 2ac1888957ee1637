package files

import (
	"net/http"
	"os"
	"path/filepath"
)

func Open(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	mode := "direct"
	var path string
	switch mode {
	case "direct":
		path = "/var/data/" + name
	case "flat":
		path = filepath.Join("/var/data", filepath.Base(name))
	default:
		path = "/var/data/index"
	}
	f, err := os.Open(path) // vuln: go.path.file-access
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
}
