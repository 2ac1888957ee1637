// safe: go.sqli.string-query
package api

import (
	"database/sql"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
)

type API struct{ db *sql.DB }

func (a *API) Routes(r *gin.Engine) {
	r.GET("/users", a.users)
	r.POST("/notes", a.createNote)
}

func (a *API) users(c *gin.Context) {
	page, err := strconv.Atoi(c.DefaultQuery("page", "1"))
	if err != nil {
		c.Status(http.StatusBadRequest)
		return
	}
	rows, err := a.db.Query("SELECT name FROM users WHERE role = $1 OFFSET "+strconv.Itoa(page*20), c.Query("role"))
	if err != nil {
		c.Status(http.StatusInternalServerError)
		return
	}
	rows.Close()
}

type note struct {
	Title string `json:"title"`
}

func (a *API) createNote(c *gin.Context) {
	var n note
	if err := c.ShouldBindJSON(&n); err != nil {
		c.Status(http.StatusBadRequest)
		return
	}
	_, _ = a.db.Exec("INSERT INTO notes (title) VALUES ($1)", n.Title)
}
