// Package e2e tests the scan service end to end through the real gateway:
// starting scans (validation, credits, claims, concurrency), running them to
// completion with findings, and surviving a worker killed mid-scan.
package e2e

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

// estimate creates an estimation of uploads and waits until it ends.
func estimate(t testing.TB, sys *systest.System, key string, repoURLs ...string) map[string]any {
	t.Helper()
	var repos []map[string]any
	for _, u := range repoURLs {
		repos = append(repos, map[string]any{"source": "upload", "repo_url": u})
	}
	return sys.Estimate(t, key, repos...)
}

func scanBody(estID, repoURL string, extra map[string]any) map[string]any {
	b := systest.UploadScan(estID, repoURL)
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// waitScan waits until the scan is completed or failed and returns its
// status; a scan still running after timeout fails the test.
func waitScan(t testing.TB, sys *systest.System, key, id string, timeout time.Duration) map[string]any {
	t.Helper()
	st, err := sys.Poll(context.Background(), key, "/scans/"+id+"/status", timeout, "completed", "failed")
	require.NoError(t, err, "\n%s", sys.Tail(80))
	return st
}

type grpcConn = grpc.ClientConn

// quietLog is a logger for the services a test builds in process.
func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
