// safe: go.cmdi.exec
package tools

import (
	"net/http"
	"os/exec"
)

func Archive(w http.ResponseWriter, r *http.Request) {
	parts := []string{"tar", r.FormValue("dir")}
	cmd := exec.Command(parts[0], "-czf", "/tmp/out.tgz", "--", parts[1])
	if err := cmd.Run(); err != nil {
		http.Error(w, "archive failed", http.StatusInternalServerError)
	}
}
