package tree

import (
	"net/http"
	"os"
	"strings"
)

// joinPath walks the segments recursively.
func joinPath(segs []string, i int) string {
	if i >= len(segs) {
		return ""
	}
	return "/" + segs[i] + joinPath(segs, i+1)
}

func Read(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(r.URL.Query().Get("p"), ",")
	data, err := os.ReadFile("/srv/docs" + joinPath(segs, 0)) // vuln: go.path.file-access
	if err != nil {
		return
	}
	_, _ = w.Write([]byte(http.StatusText(len(data))))
}
