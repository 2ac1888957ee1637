package e2e

import (
	"io"
	"log/slog"

	"google.golang.org/grpc"
)

type grpcConn = grpc.ClientConn

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
