// safe: go.path.file-access
package tree

import (
	"net/http"
	"os"
	"strings"
)

// depthPath returns a fixed path for a nesting depth, recursively.
func depthPath(n int) string {
	if n <= 0 {
		return ""
	}
	return "/level" + depthPath(n-1)
}

func Read(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(r.URL.Query().Get("p"), ",")
	data, err := os.ReadFile("/srv/docs" + depthPath(len(segs)))
	if err != nil {
		return
	}
	_, _ = w.Write([]byte(http.StatusText(len(data))))
}
