// Package e2e tests the estimation service end to end: the whole system
// from its binaries, through the real gateway, against a local HTTPS git
// server on loopback.
package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var (
	sys *systest.System
	git *gitServer
)

func TestMain(m *testing.M) {
	var err error
	git, err = newGitServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "git server:", err)
		os.Exit(1)
	}
	opts := systest.Options{Env: map[string]string{
		"VULNSCAN_EXTRA_CA_FILE":   git.CAFile,
		"ESTIMATION_JOB_TIMEOUT":   "10s",
		"ESTIMATION_RESCUE_AFTER":  "12s",
		"ESTIMATION_CLONE_TIMEOUT": "8s",
		"VULNSCAN_RATE_LIMIT":      "1000:1000",
		// Small enough for TestUploadQuota to reach; no other test keeps
		// more than two uploads in one organization.
		"ESTIMATION_MAX_UPLOADS": "4",
	}}
	code := systest.Run(m, opts, &sys)
	git.Close()
	os.Exit(code)
}
