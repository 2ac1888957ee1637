// Package e2e tests the foundation end to end: the real gateway and services
// from their binaries, over real PostgreSQL and Redis.
package e2e

import (
	"testing"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	// At debug level the services also log the calls the gateway makes for
	// public requests (at info those are only in the gateway's access
	// line), which the trace propagation tests read.
	systest.Main(m, &sys, map[string]string{"LOG_LEVEL": "debug"})
}
