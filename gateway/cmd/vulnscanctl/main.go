// Command vulnscanctl is the operators' tool: organizations, users, API keys,
// credits, connected repositories and finding verification.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/vulnscan/vulnscan/gateway/internal/ctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := ctl.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
