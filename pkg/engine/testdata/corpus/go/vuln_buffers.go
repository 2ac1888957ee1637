package wiki

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
)

// Preview renders a page title and a user-supplied layout.
func Preview(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	buf.WriteString("<html><body>")
	title := r.FormValue("title")
	buf.WriteString("<h2>" + title + "</h2>")
	_, _ = w.Write(buf.Bytes()) // vuln: go.xss.response-write

	layout, err := template.New("layout").Parse("<main>" + r.FormValue("layout") + "</main>") // vuln: go.ssti.parse
	if err != nil {
		return
	}
	_ = layout.Execute(w, nil)
	fmt.Fprintln(w, "</body></html>")
}
