// Package server wires a gRPC service process: mutual TLS on every listener,
// the interceptor chain (recovery → request id → logging → metrics → error
// translation → authorization guard, authz.go → the requests' text checks,
// text.go; the guard and the checks also on streams),
// a separate admin listener for services that have one, tracing
// through the otelgrpc stats handler with health checks filtered out when
// spans are exported, else through handlers that only propagate the trace
// (tracing.go), the
// grpc.health.v1 service, a Prometheus /metrics listener, background workers,
// and graceful shutdown (health NOT_SERVING, GracefulStop, then the rest).
package server
