package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

func Register(e *echo.Echo) {
	e.GET("/logout", logout)
	e.GET("/hello", hello)
}

func logout(c echo.Context) error {
	return c.Redirect(http.StatusFound, c.QueryParam("return_to")) // vuln: go.redirect.open
}

func hello(c echo.Context) error {
	return c.HTML(http.StatusOK, "<h1>Hello "+c.Param("name")+"</h1>") // vuln: go.xss.response-write
}
