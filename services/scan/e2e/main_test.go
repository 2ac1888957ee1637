package e2e

import (
	"os"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	os.Exit(systest.Run(m, systest.Options{Env: map[string]string{"VULNSCAN_RATE_LIMIT": "1000:2000"}}, &sys))
}
