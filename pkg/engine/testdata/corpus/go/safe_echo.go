// safe: go.redirect.open go.xss.response-write
package web

import (
	"html"
	"net/http"

	"github.com/labstack/echo/v4"
)

func Register(e *echo.Echo) {
	e.GET("/logout", logout)
	e.GET("/hello", hello)
}

func logout(c echo.Context) error {
	_ = c.QueryParam("return_to")
	return c.Redirect(http.StatusFound, "/login")
}

func hello(c echo.Context) error {
	return c.HTML(http.StatusOK, "<h1>Hello "+html.EscapeString(c.Param("name"))+"</h1>")
}
