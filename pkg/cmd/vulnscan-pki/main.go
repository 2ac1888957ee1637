// Command vulnscan-pki prepares a local PKI for `make run`: a CA, a
// certificate and key for every process identity (gateway, auth, estimation,
// scan, findings, operator) and the gateway's identity signing key pair, in
// the directory given as its argument (run.sh passes VULNSCAN_PKI_DIR,
// default .data/pki). Existing valid files are kept. A real deployment
// brings its own CA and keys instead (see the README's security section).
package main

import (
	"fmt"
	"os"

	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/principal"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: vulnscan-pki DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	if err := mtls.Generate(dir, mtls.Identities...); err != nil {
		fmt.Fprintln(os.Stderr, "vulnscan-pki:", err)
		os.Exit(1)
	}
	if err := principal.GenerateKeys(dir); err != nil {
		fmt.Fprintln(os.Stderr, "vulnscan-pki:", err)
		os.Exit(1)
	}
}
