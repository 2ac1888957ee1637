package assets

import (
	"net/http"
	"os"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/mux"
)

func Mount(r *mux.Router, c chi.Router) {
	r.HandleFunc("/files/{name}", serveFile)
	c.Get("/avatars/{user}", serveAvatar)
}

func serveFile(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["name"]
	http.ServeFile(w, r, "/srv/files/"+name) // vuln: go.path.file-access
}

func serveAvatar(w http.ResponseWriter, r *http.Request) {
	f, err := os.Open("/srv/avatars/" + chi.URLParam(r, "user") + ".png") // vuln: go.path.file-access
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
}
