// Package server wires a gRPC service process: the interceptor chain
// (recovery → request id → logging → metrics → error translation), tracing
// through the otelgrpc stats handler with health checks filtered out, the
// grpc.health.v1 service, a Prometheus /metrics listener, background workers,
// and graceful shutdown (health NOT_SERVING, GracefulStop, then the rest).
package server
