package events

import (
	"fmt"
	"net/http"
)

type Event interface{}

type Comment struct{ Text string }

type Like struct{ Count int }

func render(w http.ResponseWriter, ev Event) {
	switch e := ev.(type) {
	case Comment:
		fmt.Fprintf(w, "<li>%s</li>", e.Text) // vuln: go.xss.response-write
	case Like:
		fmt.Fprintf(w, "<li>%d likes</li>", e.Count)
	}
}

func Post(w http.ResponseWriter, r *http.Request) {
	render(w, Comment{Text: r.FormValue("text")})
}
