package main

import (
	"fmt"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Println("usage: backup <dir>")
		return
	}
	script := "tar czf /backups/latest.tgz " + os.Args[1]
	if err := exec.Command("bash", "-c", script).Run(); err != nil { // vuln: go.cmdi.exec
		os.Exit(1)
	}
}
