package admin

import (
	"net/http"
	"os/exec"
)

const allowDiagnostics = true

func Diagnose(w http.ResponseWriter, r *http.Request) {
	target := r.FormValue("target")
	if allowDiagnostics {
		out, _ := exec.Command("sh", "-c", "traceroute "+target).CombinedOutput() // vuln: go.cmdi.exec
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(http.StatusText(len(out))))
	}
}
