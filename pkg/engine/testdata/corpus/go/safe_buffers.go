// safe: go.xss.response-write go.ssti.parse
package wiki

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
)

var layout = template.Must(template.New("layout").Parse("<main>{{.}}</main>"))

// Preview renders a page title and the submitted text in a fixed layout.
func Preview(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	buf.WriteString("<html><body>")
	fmt.Fprintf(&buf, "<h2>%s</h2>", template.HTMLEscapeString(r.FormValue("title")))
	_, _ = w.Write(buf.Bytes())
	_ = layout.Execute(w, r.FormValue("text"))
	fmt.Fprintln(w, "</body></html>")
}
