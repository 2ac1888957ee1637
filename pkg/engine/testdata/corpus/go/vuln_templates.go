package pages

import (
	htmltpl "html/template"
	"net/http"
	"text/template"
)

var profile = template.Must(template.New("profile").Parse("<h1>{{.}}</h1>"))

var card = htmltpl.Must(htmltpl.New("card").Parse("<div>{{.}}</div>"))

func Profile(w http.ResponseWriter, r *http.Request) {
	_ = profile.Execute(w, r.URL.Query().Get("name")) // vuln: go.xss.response-write
}

func Card(w http.ResponseWriter, r *http.Request) {
	bio := htmltpl.HTML(r.FormValue("bio")) // vuln: go.xss.response-write
	_ = card.Execute(w, bio)
}
