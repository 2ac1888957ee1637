package orders

import (
	"fmt"
	"net/http"
	"strconv"
)

func Show(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.Query().Get("id")
	id, err := strconv.Atoi(raw)
	if err != nil {
		fmt.Fprintf(w, "<p>No order %s</p>", raw) // vuln: go.xss.response-write
		return
	}
	fmt.Fprintf(w, "<p>Order %d</p>", id)
}
