// Package e2e tests the foundation end to end: the real gateway and services
// from their binaries, over real PostgreSQL and Redis.
package e2e

import (
	"os"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	os.Exit(systest.Run(m, systest.Options{}, &sys))
}
