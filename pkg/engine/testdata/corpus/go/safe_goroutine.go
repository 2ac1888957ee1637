// safe: go.cmdi.exec
package jobs

import (
	"net/http"
	"os/exec"
	"path/filepath"
)

func convert(input string) {
	_ = exec.Command("convert", input, "out.png").Run()
}

func Enqueue(w http.ResponseWriter, r *http.Request) {
	go convert(filepath.Base(r.PostFormValue("file")))
	w.WriteHeader(http.StatusAccepted)
}
