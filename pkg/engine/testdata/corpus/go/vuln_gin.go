package api

import (
	"database/sql"
	"net/http"

	"github.com/gin-gonic/gin"
)

type API struct{ db *sql.DB }

func (a *API) Routes(r *gin.Engine) {
	r.GET("/users", a.users)
	r.POST("/notes", a.createNote)
}

func (a *API) users(c *gin.Context) {
	role := c.Query("role")
	rows, err := a.db.Query("SELECT name FROM users WHERE role = '" + role + "'") // vuln: go.sqli.string-query
	if err != nil {
		c.Status(http.StatusInternalServerError)
		return
	}
	rows.Close()
}

type note struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

func (a *API) createNote(c *gin.Context) {
	var n note
	if err := c.ShouldBindJSON(&n); err != nil {
		c.Status(http.StatusBadRequest)
		return
	}
	_, _ = a.db.Exec("INSERT INTO notes (title) VALUES ('" + n.Title + "')") // vuln: go.sqli.string-query
}
