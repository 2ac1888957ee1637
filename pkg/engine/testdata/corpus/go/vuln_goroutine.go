package jobs

import (
	"net/http"
	"os/exec"
)

func convert(input string) {
	_ = exec.Command("sh", "-c", "convert "+input+" out.png").Run() // vuln: go.cmdi.exec
}

func Enqueue(w http.ResponseWriter, r *http.Request) {
	go convert(r.PostFormValue("file"))
	w.WriteHeader(http.StatusAccepted)
}
