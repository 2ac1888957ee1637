package users

import (
	"database/sql"
	"net/http"
)

// Finder looks users up; the handler does not know the storage.
type Finder interface {
	FindByName(name string) (int, error)
}

type pgFinder struct{ db *sql.DB }

func (f *pgFinder) FindByName(name string) (int, error) {
	var id int
	err := f.db.QueryRow("SELECT id FROM users WHERE name = '" + name + "'").Scan(&id) // vuln: go.sqli.string-query
	return id, err
}

type Handler struct{ users Finder }

func NewHandler(db *sql.DB) *Handler { return &Handler{users: &pgFinder{db: db}} }

func (h *Handler) Get(w http.ResponseWriter, r *http.Request) {
	if _, err := h.users.FindByName(r.URL.Query().Get("name")); err != nil {
		http.NotFound(w, r)
	}
}
