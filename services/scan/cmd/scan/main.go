// Command scan runs the scan service. Until its API lands it serves only the
// gRPC health service and metrics, so that the system starts whole.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/server"
)

var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := logging.New(os.Stderr, "scan")
	env := config.FromOS()
	cfg := config.ReadCommon(env, "scan", "127.0.0.1:9203")
	if err := env.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "scan:", err)
		os.Exit(1)
	}
	log.Info("starting", "version", version)
	if err := server.New("scan", log, cfg.GRPCListen, cfg.MetricsAddr).Run(ctx, cfg.ShutdownGrace); err != nil {
		fmt.Fprintln(os.Stderr, "scan:", err)
		os.Exit(1)
	}
}
