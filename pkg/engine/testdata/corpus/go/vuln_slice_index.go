package tools

import (
	"net/http"
	"os/exec"
)

func Archive(w http.ResponseWriter, r *http.Request) {
	parts := []string{"tar", r.FormValue("dir")}
	cmd := exec.Command(parts[1]) // vuln: go.cmdi.exec
	if err := cmd.Run(); err != nil {
		http.Error(w, "archive failed", http.StatusInternalServerError)
	}
}
