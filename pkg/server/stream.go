package server

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/logging"
)

// Stream interceptors: the same chain as the unary one, in the same order
// (recovery → request id → logging → metrics → errors → authorization →
// text checks), so a streaming RPC (uploads, downloads, exports) is
// recovered, carries its request id, appears in the access log and the
// metrics, and answers with a translated error exactly like a unary call.

// withContext replaces a server stream's context.
func withContext(ss grpc.ServerStream, ctx context.Context) grpc.ServerStream {
	if cs, ok := ss.(*ctxStream); ok {
		return &ctxStream{ServerStream: cs.ServerStream, ctx: ctx}
	}
	return &ctxStream{ServerStream: ss, ctx: ctx}
}

func streamRecoveryInterceptor(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
		defer func() {
			if r := recover(); r != nil {
				log.ErrorContext(ss.Context(), "panic in handler", "method", info.FullMethod, "panic", r, "stack", string(debug.Stack()))
				err = status.Error(codes.Internal, apierr.Internal.Message)
			}
		}()
		return h(srv, ss)
	}
}

func streamRequestIDInterceptor(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, withContext(ss, logging.WithRequestID(ss.Context(), incomingRequestID(ss.Context()))))
}

func streamLoggingInterceptor(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		start := time.Now()
		err := h(srv, ss)
		if info.FullMethod == "/grpc.health.v1.Health/Watch" {
			return err
		}
		logRPC(ss.Context(), log, info.FullMethod, start, err)
		return err
	}
}

func streamMetricsInterceptor(m *RPCMetrics) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		start := time.Now()
		err := h(srv, ss)
		m.observe(ss.Context(), info.FullMethod, start, err)
		return err
	}
}

func streamErrorInterceptor(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		err := h(srv, ss)
		if err != nil {
			err = translate(ss.Context(), log.With("method", info.FullMethod), err)
		}
		return err
	}
}

// propagateRequestIDStream copies the request id of the incoming call to
// outgoing streams.
func propagateRequestIDStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(outgoingRequestID(ctx), desc, cc, method, opts...)
}
