// safe: go.cmdi.exec
package admin

import (
	"net/http"
	"os/exec"
)

const allowDiagnostics = false

func Diagnose(w http.ResponseWriter, r *http.Request) {
	target := r.FormValue("target")
	if allowDiagnostics {
		out, _ := exec.Command("sh", "-c", "traceroute "+target).CombinedOutput()
		_, _ = w.Write([]byte(http.StatusText(len(out))))
		return
	}
	http.Error(w, "diagnostics are disabled", http.StatusForbidden)
}
