// Command scan runs the scan service: the scan API (SCAN_MODE=api), the scan
// workers (SCAN_MODE=worker), or both (SCAN_MODE=all).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/vulnscan/vulnscan/services/scan/internal/app"
)

var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx, version); err != nil {
		fmt.Fprintln(os.Stderr, "scan:", err)
		os.Exit(1)
	}
}
