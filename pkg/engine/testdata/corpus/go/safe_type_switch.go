// safe: go.xss.response-write
package events

import (
	"fmt"
	"html"
	"net/http"
)

type Event interface{}

type Comment struct{ Text string }

type Like struct{ From string }

func render(w http.ResponseWriter, ev Event) {
	switch e := ev.(type) {
	case Comment:
		fmt.Fprintf(w, "<li>%s</li>", html.EscapeString(e.Text))
	case Like:
		fmt.Fprintf(w, "<li>liked by %s</li>", html.EscapeString(e.From))
	}
}

func Post(w http.ResponseWriter, r *http.Request) {
	render(w, Comment{Text: r.FormValue("text")})
}
