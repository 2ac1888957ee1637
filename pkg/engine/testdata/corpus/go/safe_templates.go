// safe: go.xss.response-write go.ssti.parse
package pages

import (
	"html/template"
	"net/http"
)

var card = template.Must(template.New("card").Parse("<div>{{.Name}}</div><p>{{.Bio}}</p>"))

type cardData struct {
	Name string
	Bio  string
}

func Card(w http.ResponseWriter, r *http.Request) {
	_ = card.Execute(w, cardData{Name: r.FormValue("name"), Bio: r.FormValue("bio")})
}
