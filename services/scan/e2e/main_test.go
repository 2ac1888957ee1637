package e2e

import (
	"testing"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

var sys *systest.System

func TestMain(m *testing.M) {
	systest.Main(m, &sys, map[string]string{"VULNSCAN_RATE_LIMIT": "1000:2000"})
}
