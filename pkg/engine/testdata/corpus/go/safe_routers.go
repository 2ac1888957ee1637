// safe: go.path.file-access
package assets

import (
	"net/http"
	"os"
	"path/filepath"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/mux"
)

func Mount(r *mux.Router, c chi.Router) {
	r.HandleFunc("/files/{name}", serveFile)
	c.Get("/avatars/{user}", serveAvatar)
}

func serveFile(w http.ResponseWriter, r *http.Request) {
	name := filepath.Base(mux.Vars(r)["name"])
	http.ServeFile(w, r, filepath.Join("/srv/files", name))
}

func serveAvatar(w http.ResponseWriter, r *http.Request) {
	f, err := os.Open(filepath.Join("/srv/avatars", filepath.Base(chi.URLParam(r, "user"))+".png"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
}
